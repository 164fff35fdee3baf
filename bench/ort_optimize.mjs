// ort_optimize.mjs - writes MODEL as onnxruntime saves it after its graph
// optimizations at LEVEL ("extended" by default: the fusions into
// com.microsoft ops such as Gelu, FusedMatMul, SkipLayerNormalization,
// LayerNormalization, Attention; "basic" for constant folding and
// redundant-node removal only). The file is what a user gets from
// onnxruntime's `optimized_model_filepath`, and what run_bench.sh's
// "<model>_ort" entries run.
//   usage: node bench/ort_optimize.mjs MODEL OUT [LEVEL]
import ort from 'onnxruntime-node';

const [model, out, level] = process.argv.slice(2);
if (!out) {
  console.error('usage: node bench/ort_optimize.mjs MODEL OUT [basic|extended]');
  process.exit(2);
}
await ort.InferenceSession.create(model, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  graphOptimizationLevel: level || 'extended',
  optimizedModelFilePath: out,
});
