"""quant_bench.py - quant_bench.sh's measurements: our run time, compile time
and peak memory on the quantized models of make_quant_models.py, against
onnxruntime-node on the same model in the same run, one thread each side.
  ours: `onnx2mlir run --threads 1 --repeat N --no-cache` (median over N
        calls, the first included); peak RSS of that process
  ort:  bench/ort_time.mjs (median over N session.run calls)
Checks first that both give the same outputs (rtol 1e-3, atol 1e-4; a QDQ
model's within 2% of its largest output, see below).
  usage: quant_bench.py TOOL OUT_DIR N [MODEL...]
"""
import json
import os
import re
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper


def measured(cmd, env=None):
    """Runs cmd; returns (exit status, stdout, stderr, the child's own peak
    RSS in KiB, from wait4)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.posix_spawnp(cmd[0], cmd, dict(os.environ, **(env or {})),
                              file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                                            (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, usage = os.wait4(pid, 0)
        out.seek(0)
        err.seek(0)
        return os.waitstatus_to_exitcode(status), out.read().decode(), err.read().decode(), usage.ru_maxrss


def run_ours(tool, out, model, n, env=None):
    """Runs onnx2mlir run; returns its timings, its peak RSS in KiB and its
    first output."""
    dest = f"{out}/ours_{model}"
    status, _, err, peak = measured([tool, "run", f"{out}/{model}.onnx", "--input", f"input={out}/{model}_x.npy",
                                     "--no-cache", "--threads", "1", "-o", dest, "--npy", "--repeat", str(n)], env)
    if status:
        sys.exit(f"onnx2mlir run failed on {model}:\n{err}")
    line = next(l for l in err.splitlines() if l.startswith("load: "))
    v = dict((k, float(x)) for k, x in re.findall(r"(load|emit|compile|median|min) ([0-9.]+)", line.replace(":", "")))
    return v, peak, np.load(f"{dest}/output_0.npy")


def run_ort(out, model, n):
    status, stdout, err, _ = measured(["node", "bench/ort_time.mjs", f"{out}/{model}.onnx", f"{out}/{model}_x.npy",
                                       f"{out}/ort_{model}.npy", str(n)], {"ORT_THREADS": "1"})
    if status:
        sys.exit(f"onnxruntime failed on {model}:\n{err}")
    return json.loads(stdout), np.load(f"{out}/ort_{model}.npy")


def packed_bytes(path):
    """The bytes of the model's weights as stored (initializers and
    Constants): packed values, scales, zero points."""
    m = onnx.load(path, load_external_data=False)
    tensors = list(m.graph.initializer) + [a.t for n in m.graph.node if n.op_type == "Constant"
                                           for a in n.attribute if a.name == "value"]
    return sum(onnx.numpy_helper.to_array(t).nbytes for t in tensors)


def main():
    tool, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    models = sys.argv[4:] or ["nbits_decode", "nbits_prefill", "dynamic_mlp", "dynamic_conv"] + \
        (["qdq_resnet18"] if os.path.exists(f"{out}/qdq_resnet18.onnx") else [])
    ok = True
    rows = []
    # the baselines of memory: a tiny model on as many rows (the same code
    # paths, oneDNN's included)
    tiny = {1: run_ours(tool, out, "nbits_tiny", n)[1], 64: run_ours(tool, out, "nbits_tiny_prefill", n)[1]}
    for model in models:
        o, ort_out = run_ort(out, model, n)
        v, rss, ours_out = run_ours(tool, out, model, n)
        # a QDQ model's activations are rounded at every layer: where two
        # implementations round one activation of the last quantized layer
        # apart (ties, float sums in another order), the logits move by its
        # scale times a weight row; 2% of the largest logit allows that
        atol = 0.02 * float(np.abs(ort_out).max()) if model.startswith("qdq_") else 1e-4
        same = ours_out.shape == ort_out.shape and np.allclose(ours_out, ort_out, rtol=1e-3, atol=atol)
        ok &= same
        diff = float(np.max(np.abs(ours_out.astype(np.float64) - ort_out)))
        print(f"{model}: output {list(ours_out.shape)} max abs diff vs onnxruntime {diff:.3g} "
              f"({'ok' if same else 'MISMATCH'} at rtol 1e-3, atol {atol:.3g})"
              + (f", the same argmax: {ours_out.argmax() == ort_out.argmax()}" if model.startswith("qdq_") else ""))
        rows.append((model, v, o, rss, tiny[64 if ours_out.ndim == 3 and ours_out.shape[-2] >= 64 else 1]))
    print(f"\nmedian of {n} runs each, one thread each side, onnxruntime-node {rows[0][2]['version']}")
    head = ("model", "ours run ms", "ort run ms", "run ours/ort", "ours import+compile ms", "ort create ms",
            "peak RSS MiB", "(RSS - tiny's) / packed weights")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for model, v, o, rss, tiny_rss in rows:
        packed = packed_bytes(f"{out}/{model}.onnx")
        extra = f"{(rss - tiny_rss) * 1024 / packed:.2f}"
        print(f"| {model} | {v['median']:.2f} | {o['median_ms']:.2f} | {v['median'] / o['median_ms']:.2f} | "
              f"{v['load'] + v['emit'] + v['compile']:.0f} | {o['create_ms']:.0f} | {rss / 1024:.0f} | {extra} |")
    print(f"tiny models' peak RSS: one row {tiny[1] / 1024:.0f} MiB, 64 rows {tiny[64] / 1024:.0f} MiB; weights: "
          + ", ".join(f"{m} {packed_bytes(f'{out}/{m}.onnx') / 2**20:.1f} MiB" for m, *_ in rows))
    if os.environ.get("FLOAT_ROUTE"):  # the float decomposition, for comparison (slow: a few calls)
        v, rss, _ = run_ours(tool, out, models[0], 3, {"ONNX2MLIR_NO_QUANT_KERNELS": "1"})
        print(f"{models[0]} through the float decomposition (ONNX2MLIR_NO_QUANT_KERNELS=1): run median "
              f"{v['median']:.1f} ms, import+compile {v['load'] + v['emit'] + v['compile']:.0f} ms, "
              f"peak RSS {rss / 1024:.0f} MiB")
    sys.exit(0 if ok else 1)


main()
