// ort_reference.mjs - onnxruntime's outputs for the contrib-op test cases
// (make_contrib_tests.py writes the models and inputs, then runs this):
// for each CASE folder, runs CASE/model.onnx on CASE/ref/input_<i>.npy (in
// the model's input order) and writes CASE/ref/output_<i>.npy. When
// CASE/ref/source.onnx exists, CASE/model.onnx is first written from it
// by onnxruntime's 'extended' graph optimizations (optimizedModelFilePath),
// as deployed models are. When CASE/ref/reference.onnx exists (an op with
// no CPU kernel in onnxruntime), the outputs come from that equivalent
// model in standard ops instead. Developer tooling: needs onnxruntime-node (npm
// install --ignore-scripts in bench/), never run by the tests.
//   usage: node tests/contrib/ort_reference.mjs CASE...
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ort = require(process.env.ORT_NODE || 'onnxruntime-node');

const DTYPES = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array],
                 '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array],
                 '<u2': ['uint16', Uint16Array], '<i2': ['int16', Int16Array] };

function readNpy(path) {
  const buf = readFileSync(path);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  const descr = header.match(/'descr': '([^']*)'/)[1];
  const [type, Ctor] = DTYPES[descr] || [];
  if (!type || header.includes("'fortran_order': True")) throw new Error(`${path}: unsupported .npy (${descr})`);
  const dims = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const bytes = buf.subarray(10 + headerLen);
  const data = new Ctor(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  return new ort.Tensor(type, data, dims);
}

function writeNpy(path, tensor) {
  const descr = Object.keys(DTYPES).find((k) => DTYPES[k][0] === tensor.type);
  if (!descr) throw new Error(`${path}: output type ${tensor.type} not supported`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'), data]));
}

for (const dir of process.argv.slice(2)) {
  if (existsSync(`${dir}/ref/source.onnx`))
    await ort.InferenceSession.create(`${dir}/ref/source.onnx`, {
      intraOpNumThreads: 1, graphOptimizationLevel: 'extended', optimizedModelFilePath: `${dir}/model.onnx` });
  const source = existsSync(`${dir}/ref/reference.onnx`) ? `${dir}/ref/reference.onnx` : `${dir}/model.onnx`;
  const session = await ort.InferenceSession.create(source,
                                                     { intraOpNumThreads: 1, graphOptimizationLevel: 'disabled' });
  const feeds = {};
  session.inputNames.forEach((name, i) => { feeds[name] = readNpy(`${dir}/ref/input_${i}.npy`); });
  const results = await session.run(feeds);
  session.outputNames.forEach((name, i) => writeNpy(`${dir}/ref/output_${i}.npy`, results[name]));
  if (!existsSync(`${dir}/ref/output_0.npy`)) throw new Error(`${dir}: no output`);
}
