#!/usr/bin/env python3
"""check_run_values.py - `onnx2mlir run` on the backend tests whose inputs
or outputs are sequences or optionals: each test of the linalg ratchet
with such a graph input or output is run with --inputs test_data_set_0
-o OUTDIR, and the files written are compared here, outside the tool,
with the expected output_<i>.pb (read by onnx's own protobuf classes;
numpy allclose at rtol 1e-3, atol 1e-7, as `onnx2mlir test` compares).
Prints a line per failure and "run values: N passed, N failed".
Usage: /usr/bin/python3 check_run_values.py BUILD_DIR"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1]
suites = {"node-tests": os.path.join(here, "..", "..", "..", "shared", "onnx-node-tests"),
          "libonnx-node": "/usr/share/libonnx-testdata/data/node"}
listed = set(open(os.path.join(here, "linalg.pass")).read().split())


def kind(value_info):
    return value_info.type.WhichOneof("value")


def load(path, k):
    """A value file as nested Python: an array, a list of arrays, or None / a value for an optional."""
    data = open(path, "rb").read()
    if k == "sequence_type":
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return [numpy_helper.to_array(t) for t in seq.tensor_values]
    if k == "optional_type":
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        if opt.elem_type == onnx.OptionalProto.TENSOR:
            return numpy_helper.to_array(opt.tensor_value)
        if opt.elem_type == onnx.OptionalProto.SEQUENCE:
            return [numpy_helper.to_array(t) for t in opt.sequence_value.tensor_values]
        return None
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t)


def same(a, b):
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-3, atol=1e-7, equal_nan=True))
    return bool(np.array_equal(a, b))


passed = failed = 0
for label, root in suites.items():
    if not os.path.isdir(root):
        continue
    for name in sorted(os.listdir(root)):
        if "%s/%s" % (label, name) not in listed:
            continue
        case = os.path.join(root, name)
        model = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
        inits = {t.name for t in model.graph.initializer}
        ios = [v for v in model.graph.input if v.name not in inits] + list(model.graph.output)
        if all(kind(v) == "tensor_type" for v in ios):
            continue
        with tempfile.TemporaryDirectory() as out:
            run = subprocess.run([os.path.join(build, "onnx2mlir"), "run", os.path.join(case, "model.onnx"),
                                  "--inputs", os.path.join(case, "test_data_set_0"), "-o", out],
                                 capture_output=True, text=True, timeout=300)
            ok = run.returncode == 0
            why = run.stderr.strip()[:200]
            for i, o in enumerate(model.graph.output):
                if not ok:
                    break
                got = os.path.join(out, "output_%d.pb" % i)
                want = os.path.join(case, "test_data_set_0", "output_%d.pb" % i)
                if not os.path.exists(got) or not same(load(got, kind(o)), load(want, kind(o))):
                    ok, why = False, "output %d '%s' differs" % (i, o.name)
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL %s/%s: %s" % (label, name, why))
print("run values: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
