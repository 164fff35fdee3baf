// ort_time.mjs - onnxruntime's side of run_bench.sh: creates a session for
// MODEL on one thread (intra-op: ORT_THREADS, default 1; inter-op 1), runs it N times on INPUT.npy
// (float32, the model's first input) and writes the first output to
// OUT.npy. Prints one JSON line: session-create ms, median and min run ms.
// No separate warmup: the first run is one of the N, as in `onnx2mlir run
// --repeat N`, and the median is what the table compares.
//   usage: node bench/ort_time.mjs MODEL INPUT.npy OUT.npy N
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import ort from 'onnxruntime-node';

function readNpy(path) {
  const buf = readFileSync(path);
  const headerLen = buf.readUInt16LE(8); // version 1.0 header
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!header.includes("'descr': '<f4'") || header.includes("'fortran_order': True"))
    throw new Error(`${path}: only C-order float32 .npy is supported`);
  const dims = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + headerLen, buf.byteOffset + buf.length));
  return new ort.Tensor('float32', data, dims);
}

function writeNpy(path, tensor) {
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n'; // pad to 64 bytes
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'), data]));
}

const [model, inputPath, outPath, nArg] = process.argv.slice(2);
if (!nArg) {
  console.error('usage: node bench/ort_time.mjs MODEL INPUT.npy OUT.npy N');
  process.exit(2);
}
const n = Number(nArg);
const t0 = performance.now();
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: Number(process.env.ORT_THREADS || 1), // ORT_THREADS: threads_bench.sh
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
});
const createMs = performance.now() - t0;
const feeds = { [session.inputNames[0]]: readNpy(inputPath) };
const times = [];
let result;
for (let i = 0; i < n; i++) {
  const s = performance.now();
  result = await session.run(feeds);
  times.push(performance.now() - s);
}
writeNpy(outPath, result[session.outputNames[0]]);
times.sort((a, b) => a - b);
const median = n % 2 ? times[(n - 1) / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
console.log(JSON.stringify({ version: ort.env.versions.node, create_ms: createMs, median_ms: median, min_ms: times[0], n }));
