#!/usr/bin/env python3
"""test_python.py - the installed Python module, as a user would use it:
load, summary, inputs and outputs, import to every target, run on the
bundled example against the CLI's output files, bad models
raising onnx2mlir.Error with the library's diagnostic, and a warning
reaching Python's warnings. Run from the project root with the
module on PYTHONPATH (tests/install/check_install.sh does)."""
import ctypes
import os
import sys
import tempfile
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnx2mlir

EXAMPLE = "examples/small_cnn.onnx"
failures = []


def check(name, condition, detail=""):
    print("%s %s%s" % ("ok  " if condition else "FAIL", name, (": " + detail) if detail and not condition else ""))
    if not condition:
        failures.append(name)


def expected_probs():
    """What the build tree's `onnx2mlir run -o DIR` wrote for the example's
    inputs (DIR/output_0.pb; $O2M_EXPECTED names DIR): another path through
    the code (the CLI, its plugin, the TensorProto writer)."""
    t = TensorProto()
    with open(os.path.join(os.environ["O2M_EXPECTED"], "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


model = onnx2mlir.load(EXAMPLE)
check("version", onnx2mlir.__version__ == "0.1.0", onnx2mlir.__version__)
summary = model.summary()
check("summary names the ops", "Conv" in summary and "image" in summary, summary[:200])
check("inputs", [v.name for v in model.inputs] == ["image"] and model.inputs[0].dtype == np.float32
      and model.inputs[0].shape == ("batch", 1, 28, 28), repr([(v.name, v.dtype, v.shape) for v in model.inputs]))
check("outputs", [v.name for v in model.outputs] == ["probs"] and model.outputs[0].shape == ("batch", 10),
      repr([(v.name, v.shape) for v in model.outputs]))

for target in onnx2mlir.TARGETS:
    if target == "tosa":  # TOSA takes static shapes; the model has a dynamic batch
        continue
    text = model.import_to(target)
    check("import --to %s" % target, isinstance(text, str) and "func.func" in text, text[:120])
try:
    model.import_to("tosa", tosa_spec="1.0")
    check("tosa 1.0 refuses the dynamic batch", False)
except onnx2mlir.Error as e:
    check("tosa 1.0 refuses the dynamic batch", "'conv1' (Conv" in str(e) and "dynamic" in str(e), str(e))
code = model.import_to("linalg", bytecode=True)
check("bytecode", isinstance(code, bytes) and code[:4] == b"ML\xefR", repr(code[:8]))

t = TensorProto()
with open("examples/small_cnn_inputs/input_0.pb", "rb") as f:
    t.ParseFromString(f.read())
images = numpy_helper.to_array(t).astype(np.float32)
want = expected_probs()
for target in ("linalg", "tosa"):
    out = model.run({"image": images}, target=target)
    got = out.get("probs")
    check("run --target %s" % target, got is not None and got.shape == want.shape and
          np.allclose(got, want, rtol=1e-4, atol=1e-5), "%r vs %r" % (got, want))
out = model.run([images[:1]])  # by position, another batch size
check("run by position, batch 1", out["probs"].shape == (1, 10) and np.allclose(out["probs"], want[:1], rtol=1e-4, atol=1e-5))

try:
    model.run({"image": images.astype(np.float64)})
    check("a float64 array is refused", False)
except TypeError as e:
    check("a float64 array is refused", "must be float32" in str(e), str(e))

with tempfile.TemporaryDirectory() as tmp:
    # compile: the library's header declares the run function; a library
    # loaded with ctypes gives run's probabilities for any batch size
    lib_path, header = os.path.join(tmp, "libcnn.so"), os.path.join(tmp, "cnn.h")
    model.compile(lib_path, header=header, name="cnn")
    check("compile writes a header", "int cnn_run(const onnx2mlir_tensor *inputs" in open(header).read())

    class CTensor(ctypes.Structure):
        _fields_ = [("dtype", ctypes.c_int32), ("rank", ctypes.c_int32), ("dims", ctypes.c_int64 * 16),
                    ("data", ctypes.c_void_p)]

    compiled = ctypes.CDLL(lib_path)
    x = np.ascontiguousarray(images)
    t_in = CTensor(1, 4, (ctypes.c_int64 * 16)(*x.shape), x.ctypes.data)
    t_out = CTensor()
    status = compiled.cnn_run(ctypes.byref(t_in), 1, ctypes.byref(t_out), 1)
    got = None
    if status == 0:
        got = np.ctypeslib.as_array(ctypes.cast(t_out.data, ctypes.POINTER(ctypes.c_float)),
                                    (t_out.dims[0], t_out.dims[1])).copy()
        compiled.cnn_free_outputs(ctypes.byref(t_out), 1)
    check("the compiled library runs", got is not None and np.allclose(got, want, rtol=1e-4, atol=1e-5),
          "status %d, %r" % (status, got))
    try:
        model.compile(os.path.join(tmp, "lib.a"))
        check("compile refuses a .a", False)
    except onnx2mlir.Error as e:
        check("compile refuses a .a", e.status_name == "bad usage" and "lib.a" in str(e), str(e))

    bad = os.path.join(tmp, "bad.onnx")
    with open(bad, "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff\x0f not a model")
    try:
        onnx2mlir.load(bad)
        check("a bad model raises onnx2mlir.Error", False)
    except onnx2mlir.Error as e:
        check("a bad model raises onnx2mlir.Error", "bad.onnx" in str(e) and e.status_name == "parse error",
              "%s (%s)" % (e, e.status_name))

    # a node whose op does not exist: the diagnostic names node, op and opset
    g = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], name="frob")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = os.path.join(tmp, "unknown_op.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    try:
        onnx2mlir.load(path).import_to("linalg")
        check("an unknown op raises onnx2mlir.Error", False)
    except onnx2mlir.Error as e:
        check("an unknown op raises onnx2mlir.Error", "'frob'" in str(e) and "Frobnicate" in str(e), str(e))

    # a declared type that contradicts inference: a warning, not an error
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])])
    path = os.path.join(tmp, "declared.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        onnx2mlir.load(path)
    check("a warning reaches Python", any(issubclass(w.category, onnx2mlir.ModelWarning) and "declared" in str(w.message)
                                          for w in caught), repr([str(w.message) for w in caught]))

print("python: %d failed" % len(failures))
sys.exit(1 if failures else 0)
