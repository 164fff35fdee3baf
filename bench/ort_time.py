"""ort_time.py - ort_time.mjs's measurement through onnxruntime's Python
package, for machines with Python's onnxruntime and no node: a session on
ORT_THREADS intra-op threads (default 1; inter-op 1, sequential, all graph
optimizations), N runs on INPUT.npy (the first counted, as `run
--repeat`), the first output written to OUT.npy; prints one JSON line:
session-create ms, median and min run ms.
  usage: python3 bench/ort_time.py MODEL INPUT.npy OUT.npy N
"""
import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort


def main(model, inp, out, n):
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(os.environ.get("ORT_THREADS", "1"))
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    create_ms = (time.perf_counter() - t0) * 1e3
    feeds = {sess.get_inputs()[0].name: np.load(inp)}
    times, first = [], None
    for _ in range(int(n)):
        t = time.perf_counter()
        outs = sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
        first = first if first is not None else outs[0]
    np.save(out, first)
    print(json.dumps({"create_ms": create_ms, "median_ms": float(np.median(times)), "min_ms": min(times)}))


if __name__ == "__main__":
    main(*sys.argv[1:])
