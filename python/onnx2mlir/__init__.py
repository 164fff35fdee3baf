"""onnx2mlir from Python: load an ONNX model, read its summary, inputs and
outputs, import it to MLIR (torch, onnx, linalg, tosa, stablehlo; text or
bytecode) and run it on NumPy arrays. A thin layer over libonnx2mlir.so
(include/onnx2mlir.h) through ctypes.

    import numpy as np, onnx2mlir
    model = onnx2mlir.load("model.onnx")
    print(model.summary())
    mlir_text = model.import_to("linalg")
    outputs = model.run({"x": np.zeros((1, 3, 224, 224), np.float32)})

    sess = onnx2mlir.InferenceSession("model.onnx")   # compiled once
    [y] = sess.run(None, {"x": np.zeros((1, 3, 224, 224), np.float32)})

Errors of the library raise onnx2mlir.Error, whose message is the library's
diagnostic (file, node, op, opset and reason); the library's warnings go
through Python's `warnings` as onnx2mlir.ModelWarning.
"""
import ctypes
import os

import numpy as np

from . import _capi
from ._capi import lib

from ._common import Error, ModelWarning, NUMPY_OF as _NUMPY_OF, DTYPE_OF as _DTYPE_OF
from ._common import Handle as _Handle, check as _check, new_diag as _diag
from ._session import InferenceSession, NodeArg

__all__ = ["Error", "ModelWarning", "Model", "Value", "InferenceSession", "NodeArg", "load", "TARGETS",
           "__version__"]
__version__ = lib.o2m_version().decode()

TARGETS = ("torch", "onnx", "linalg", "tosa", "stablehlo")


class Value:
    """A graph input or output: `name`, `type` (as `onnx2mlir info` writes
    it), `dtype` (a NumPy dtype, None when not a tensor of one), `shape` (a
    tuple of sizes, dim names or None for unknown dims; None when unranked)."""

    def __init__(self, desc):
        self.name = desc.name.decode()
        self.type = desc.type.decode()
        self.is_tensor = bool(desc.is_tensor)
        kind = _NUMPY_OF.get(desc.dtype)
        self.dtype = np.dtype(kind) if kind is not None else None
        self.onnx_dtype = desc.dtype
        self.shape = None
        if desc.is_tensor and desc.rank >= 0:
            dims = []
            for k in range(desc.rank):
                if desc.dims[k] >= 0:
                    dims.append(int(desc.dims[k]))
                else:
                    name = desc.dim_names[k]
                    dims.append(name.decode() if name else None)
            self.shape = tuple(dims)

    def __repr__(self):
        return "Value(%r, %r)" % (self.name, self.type)


class Model(_Handle):
    """A loaded model (onnx2mlir.load). Each import_to and run works on a
    fresh load of the same file, so a Model can be imported and run any
    number of times."""

    def __init__(self, path, data_dir=None):
        self.path = os.fspath(path)
        self.data_dir = os.fspath(data_dir) if data_dir is not None else None
        self._handle = self._load()
        self.inputs = self._values(lib.o2m_model_input_count, lib.o2m_model_input)
        self.outputs = self._values(lib.o2m_model_output_count, lib.o2m_model_output)

    def _load(self):
        options = _capi.LoadOptions(self.data_dir.encode() if self.data_dir is not None else None, 0)
        handle = ctypes.c_void_p()
        d = _diag()
        _check(lib.o2m_model_load(self.path.encode(), ctypes.byref(options), ctypes.byref(handle), ctypes.byref(d)), d)
        return handle

    def _values(self, count, describe):
        out = []
        for i in range(count(self._handle)):
            desc = _capi.ValueDesc()
            d = _diag()
            _check(describe(self._handle, i, ctypes.byref(desc), ctypes.byref(d)), d)
            out.append(Value(desc))
        return out

    _free = staticmethod(lib.o2m_model_free)  # close(): releases the model's mapping

    def summary(self, types=False):
        """The summary `onnx2mlir info` prints (types=True: every value with
        its inferred type)."""
        text = ctypes.c_void_p()
        d = _diag()
        _check(lib.o2m_model_info_text(self._handle, 1 if types else 0, ctypes.byref(text), ctypes.byref(d)), d)
        try:
            return ctypes.string_at(text).decode()
        finally:
            lib.o2m_free(text)

    def import_to(self, target="torch", bytecode=False, tosa_spec=None):
        """The model as MLIR for `target` (one of TARGETS): str, or bytes of
        MLIR bytecode when bytecode=True."""
        code = lib.o2m_target_from_name(str(target).encode())
        if code < 0:
            raise ValueError("unknown target %r (one of %s)" % (target, ", ".join(TARGETS)))
        options = _capi.ImportOptions(code, 1 if bytecode else 0, _capi.PROGRESS_FN(), None,
                                      tosa_spec.encode() if tosa_spec else None)
        handle = self._load()
        buf, size = ctypes.c_void_p(), ctypes.c_size_t()
        d = _diag()
        try:
            _check(lib.o2m_model_import_to_buffer(handle, ctypes.byref(options), ctypes.byref(buf),
                                                  ctypes.byref(size), ctypes.byref(d)), d)
            data = ctypes.string_at(buf, size.value)
        finally:
            lib.o2m_free(buf)
            lib.o2m_model_free(handle)
        return data if bytecode else data.decode()

    def compile(self, output, header=None, name="model", opt_level=2, cpu=None):
        """Compiles the model into a shared library (output ending in .so) or
        an object (.o) with a C ABI, dynamic dims kept dynamic, and writes its
        C header to `header` when given; `cpu` names the CPU it will run on
        (None: this machine's; see `onnx2mlir compile --help`)."""
        if opt_level not in (0, 1, 2, 3):
            raise ValueError("opt_level takes 0, 1, 2 or 3")
        options = _capi.CompileOptions(os.fsencode(output), os.fsencode(header) if header else None,
                                       name.encode(), -1 if opt_level == 0 else opt_level, None, None, 0,
                                       cpu.encode() if cpu else None)
        handle = self._load()
        d = _diag()
        try:
            _check(lib.o2m_model_compile(handle, ctypes.byref(options), ctypes.byref(d)), d)
        finally:
            lib.o2m_model_free(handle)

    def run(self, inputs, target="linalg", opt_level=2):
        """Runs the model once on `inputs` (a dict from input name to array,
        or a sequence of arrays in input order) and returns a dict from
        output name to NumPy array: a one-shot InferenceSession (code
        specialised to these shapes, kept in the disk cache). Arrays must
        have the input's dtype; other array likes (lists, scalars) are
        converted to it. To call a model many times, use InferenceSession."""
        arrays = self._arrange(inputs)
        with InferenceSession(self.path, target=target, opt_level=opt_level, shapes="specialize",
                              data_dir=self.data_dir) as session:
            outputs = session.run(None, {v.name: a for v, a in zip(self.inputs, arrays)})
            return {o.name: y for o, y in zip(session.get_outputs(), outputs)}

    def _arrange(self, inputs):
        """The input arrays in input order, C-contiguous, of the inputs' dtypes."""
        if isinstance(inputs, dict):
            unknown = sorted(set(inputs) - {v.name for v in self.inputs})
            if unknown:
                raise ValueError("the model has no input %s (its inputs: %s)"
                                 % (", ".join(map(repr, unknown)), ", ".join(v.name for v in self.inputs)))
            missing = [v.name for v in self.inputs if v.name not in inputs]
            if missing:
                raise ValueError("input %s is missing" % ", ".join(map(repr, missing)))
            given = [inputs[v.name] for v in self.inputs]
        else:
            given = list(inputs)
            if len(given) != len(self.inputs):
                raise ValueError("the model takes %d inputs but %d were given" % (len(self.inputs), len(given)))
        arrays = []
        for value, x in zip(self.inputs, given):
            if not value.is_tensor or value.dtype is None:
                raise TypeError("input '%s' is %s: run() takes tensors of NumPy dtypes only" % (value.name, value.type))
            if isinstance(x, np.ndarray) and x.dtype != value.dtype:
                raise TypeError("input '%s' must be %s (%s) but is %s" % (value.name, value.dtype, value.type, x.dtype))
            a = np.asarray(x, dtype=value.dtype)
            arrays.append(a if a.flags.c_contiguous else a.copy(order="C"))  # 0-d stays 0-d
        return arrays

    def __repr__(self):
        return "onnx2mlir.Model(%r)" % (self.path,)


def load(path, data_dir=None):
    """Loads, links and type-infers the ONNX model at `path` (external data
    from `data_dir`, default the model's folder)."""
    return Model(path, data_dir)
