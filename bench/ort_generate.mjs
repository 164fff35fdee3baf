// ort_generate.mjs - onnxruntime's greedy generation with a decoder of
// tests/session/make_decoder.py's form (input_ids, position_ids and
// past_key_<l>/past_value_<l> in; logits and present_* out), on one thread:
// the prompt of make_decoder.prompt (NPROMPT tokens), an empty cache, then
// NNEW steps of one token, each step's presents fed back as the next pasts.
// Prints one JSON line: the tokens, session-create ms, and the median and
// minimum ms of a whole loop over REPEATS loops.
//   usage: node bench/ort_generate.mjs MODEL LAYERS KV_HEADS HEAD_DIM VOCAB [NPROMPT NNEW REPEATS]
import { performance } from 'node:perf_hooks';
import ort from 'onnxruntime-node';

const [model, layersArg, kvArg, hdArg, vocabArg, promptArg, newArg, repArg] = process.argv.slice(2);
if (!vocabArg) {
  console.error('usage: node bench/ort_generate.mjs MODEL LAYERS KV_HEADS HEAD_DIM VOCAB [NPROMPT NNEW REPEATS]');
  process.exit(2);
}
const layers = Number(layersArg), kvHeads = Number(kvArg), headDim = Number(hdArg), vocab = Number(vocabArg);
const nPrompt = Number(promptArg || 8), nNew = Number(newArg || 32), repeats = Number(repArg || 5);
const options = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' };
const t0 = performance.now();
const session = await ort.InferenceSession.create(model, options);
const createMs = performance.now() - t0;

async function generate() {
  let ids = BigInt64Array.from({ length: nPrompt }, (_, i) => BigInt((i * 37 + 5) % vocab));
  let pos = BigInt64Array.from({ length: nPrompt }, (_, i) => BigInt(i));
  const past = {};
  for (let l = 0; l < layers; l++)
    for (const kind of ['key', 'value'])
      past[`past_${kind}_${l}`] = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, headDim]);
  const tokens = [];
  for (let step = 0; step < nNew; step++) {
    const feeds = { input_ids: new ort.Tensor('int64', ids, [1, ids.length]),
      position_ids: new ort.Tensor('int64', pos, [1, pos.length]), ...past };
    const out = await session.run(feeds);
    const logits = out.logits.data, s = out.logits.dims[1];
    let best = 0;
    for (let v = 1; v < vocab; v++) if (logits[(s - 1) * vocab + v] > logits[(s - 1) * vocab + best]) best = v;
    tokens.push(best);
    for (let l = 0; l < layers; l++)
      for (const kind of ['key', 'value']) past[`past_${kind}_${l}`] = out[`present_${kind}_${l}`];
    const next = pos[pos.length - 1] + 1n;
    ids = BigInt64Array.of(BigInt(best));
    pos = BigInt64Array.of(next);
  }
  return tokens;
}

let tokens = null;
const ms = [];
for (let r = 0; r < repeats; r++) {
  const t = performance.now();
  tokens = await generate();
  ms.push(performance.now() - t);
}
ms.sort((a, b) => a - b);
const median = ms.length % 2 ? ms[(ms.length - 1) / 2] : (ms[ms.length / 2 - 1] + ms[ms.length / 2]) / 2;
console.log(JSON.stringify({ tokens, create_ms: createMs, loop_median_ms: median, loop_min_ms: ms[0] }));
