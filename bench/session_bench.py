#!/usr/bin/env python3
"""session_bench.py BUILD OUT N MODEL... - what a session costs from Python,
against what the CLI and onnxruntime measure in the same run (one thread on
each side). Run by bench/session_bench.sh, which makes the models.

For each MODEL (an .onnx with MODEL_x.npy beside it, fed to its first input):
  cli      `onnx2mlir run --repeat N --no-cache`: the median call
  python   InferenceSession(...).run(None, feeds): the median of N calls after
           the first (which compiles); target: cli x 1.2 + 0.05 ms
  cached   a second session on a warm cache folder: its creation (models
           with fixed sizes load their code then; target: under 50 ms) and
           creation + first call (every model loads its code by then)
For OUT/decoder.onnx (tests/session/make_decoder.py), greedy generation of
32 tokens after an 8-token prompt from an empty KV cache, the presents fed
back: our loop (first loop: creation + compiles, no cache; then the median of
5 loops) against bench/ort_generate.mjs (creation; median of 5 loops); the
tokens must be equal. Targets: loop within 1.5x, creation + first loop within
3x of onnxruntime's creation + loop.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

build, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
models = sys.argv[4:]
root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(root, "tests", "session"))
import onnx2mlir  # noqa: E402  (PYTHONPATH set by session_bench.sh)
import make_decoder  # noqa: E402

tool = os.path.join(build, "onnx2mlir")
rows = []


def cli_median(path, x_path, first_input):
    err = subprocess.run([tool, "run", path, "--input", "%s=%s" % (first_input, x_path), "--no-cache",
                          "--repeat", str(n), "-o", os.path.join(out, "session_cli_out")],
                         capture_output=True, text=True, check=True).stderr
    return float(re.search(r"median ([0-9.]+)", err).group(1))


for path in models:
    name = os.path.basename(path)[:-5]
    x = np.load(path[:-5] + "_x.npy")
    s = onnx2mlir.InferenceSession(path, cache=False)
    feeds = {s.get_inputs()[0].name: x}
    s.run(None, feeds)
    ms = []
    for _ in range(n):
        t = time.perf_counter()
        s.run(None, feeds)
        ms.append((time.perf_counter() - t) * 1e3)
    py = statistics.median(ms)
    cli = cli_median(path, path[:-5] + "_x.npy", s.get_inputs()[0].name)
    cache = os.path.join(out, "session_cache")
    shutil.rmtree(cache, ignore_errors=True)
    onnx2mlir.InferenceSession(path, cache_dir=cache).run(None, feeds)  # stores
    t = time.perf_counter()
    warm = onnx2mlir.InferenceSession(path, cache_dir=cache)
    created = (time.perf_counter() - t) * 1e3
    warm.run(None, feeds)
    first = (time.perf_counter() - t) * 1e3
    st = warm.stats()
    rows.append((name, cli, py, py / (cli * 1.2 + 0.05), created, first, st["cache_loads"], st["compiles"]))

print("| model | cli run ms | python session.run ms | python / (cli x 1.2 + 0.05) | "
      "warm cache: creation ms | creation + first call ms | variants loaded / compiled |")
print("|---|---|---|---|---|---|---|")
for name, cli, py, r, created, first, loaded, compiled in rows:
    print("| %s | %.3f | %.3f | %.2f | %.1f | %.1f | %d / %d |" % (name, cli, py, r, created, first, loaded, compiled))

# ---- generation ----------------------------------------------------------------
dec = os.path.join(out, "decoder.onnx")
c = make_decoder.Config()
t0 = time.perf_counter()
s = onnx2mlir.InferenceSession(dec, cache=False)


def step(ids, pos, past):
    feeds = {"input_ids": ids, "position_ids": pos}
    for l, (k, v) in enumerate(past):
        feeds["past_key_%d" % l], feeds["past_value_%d" % l] = k, v
    o = s.run(None, feeds)
    return o[0], [(o[1 + 2 * l], o[2 + 2 * l]) for l in range(c.layers)]


tokens = make_decoder.generate(step, c)
first = (time.perf_counter() - t0) * 1e3
cold_compiles = s.stats()["compiles"]
loops = []
for _ in range(5):
    t = time.perf_counter()
    again = make_decoder.generate(step, c)
    loops.append((time.perf_counter() - t) * 1e3)
assert again == tokens
ort = json.loads(subprocess.run(["node", os.path.join(root, "bench", "ort_generate.mjs"), dec, str(c.layers),
                                 str(c.kv_heads), str(c.head_dim), str(c.vocab), "8", "32", "5"],
                                capture_output=True, text=True, check=True, cwd=root).stdout.splitlines()[-1])
loop = statistics.median(loops)
# the same from a warm disk cache: a first session stores both variants,
# a second one loads them
cache = os.path.join(out, "session_cache")
shutil.rmtree(cache, ignore_errors=True)
s = onnx2mlir.InferenceSession(dec, cache_dir=cache)
make_decoder.generate(step, c)
t0 = time.perf_counter()
s = onnx2mlir.InferenceSession(dec, cache_dir=cache)
assert make_decoder.generate(step, c) == tokens
warm_first = (time.perf_counter() - t0) * 1e3
warm_loaded = s.stats()["cache_loads"]
print("\ngeneration (8-token prompt, 32 new tokens, decoder of %d layers, hidden %d, %d/%d heads):"
      % (c.layers, c.hidden, c.heads, c.kv_heads))
print("  tokens equal onnxruntime's: %s" % (tokens == ort["tokens"]))
print("  ours: creation + first loop %.0f ms (%d compiles), loop median %.2f ms"
      % (first, cold_compiles, loop))
print("  onnxruntime-node: creation %.0f ms, loop median %.2f ms"
      % (ort["create_ms"], ort["loop_median_ms"]))
print("  ours from a warm disk cache: creation + first loop %.0f ms (%d variants loaded)" % (warm_first, warm_loaded))
print("  loop ours/ort %.2f (target 1.5); creation + loop ours/ort %.2f cold, %.2f from a warm cache (target 3)"
      % (loop / ort["loop_median_ms"], first / (ort["create_ms"] + ort["loop_median_ms"]),
         warm_first / (ort["create_ms"] + ort["loop_median_ms"])))
sys.exit(0 if tokens == ort["tokens"] else 1)
