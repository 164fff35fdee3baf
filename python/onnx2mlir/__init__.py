"""onnx2mlir from Python: load an ONNX model, read its summary, inputs and
outputs, import it to MLIR (torch, onnx, linalg, tosa, stablehlo; text or
bytecode) and run it on NumPy arrays. A thin layer over libonnx2mlir.so
(include/onnx2mlir.h) through ctypes.

    import numpy as np, onnx2mlir
    model = onnx2mlir.load("model.onnx")
    print(model.summary())
    mlir_text = model.import_to("linalg")
    outputs = model.run({"x": np.zeros((1, 3, 224, 224), np.float32)})

Errors of the library raise onnx2mlir.Error, whose message is the library's
diagnostic (file, node, op, opset and reason); the library's warnings go
through Python's `warnings` as onnx2mlir.ModelWarning.
"""
import ctypes
import os
import warnings

import numpy as np

from . import _capi
from ._capi import lib

__all__ = ["Error", "ModelWarning", "Model", "Value", "load", "TARGETS", "__version__"]
__version__ = lib.o2m_version().decode()

TARGETS = ("torch", "onnx", "linalg", "tosa", "stablehlo")

# ONNX's TensorProto.DataType numbers and the NumPy dtypes they hold
_NUMPY_OF = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
             7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
_DTYPE_OF = {np.dtype(v): k for k, v in _NUMPY_OF.items()}


class Error(Exception):
    """A failure of the library: `status` (the o2m_status number),
    `status_name` ("invalid model", ...) and the diagnostic as the message."""

    def __init__(self, status, message):
        self.status = status
        self.status_name = lib.o2m_status_name(status).decode()
        super().__init__(message or self.status_name)


class ModelWarning(UserWarning):
    """A warning of the library (e.g. a declared type that contradicts
    inference)."""


def _on_warning(user, message):
    warnings.warn(message.decode(errors="replace"), ModelWarning, stacklevel=3)


_WARN = _capi.WARN_FN(_on_warning)


def _diag():
    d = _capi.Diag()
    d.warn = _WARN
    return d


def _check(status, diag):
    if status:
        raise Error(status, diag.message.decode(errors="replace"))


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


class Model:
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

    def close(self):
        """Releases the model's mapping (also done when it is collected)."""
        if getattr(self, "_handle", None):
            lib.o2m_model_free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

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

    def compile(self, output, header=None, name="model", opt_level=2):
        """Compiles the model into a shared library (output ending in .so) or
        an object (.o) with a C ABI, dynamic dims kept dynamic, and writes its
        C header to `header` when given (see `onnx2mlir compile --help`)."""
        if opt_level not in (0, 1, 2, 3):
            raise ValueError("opt_level takes 0, 1, 2 or 3")
        options = _capi.CompileOptions(os.fsencode(output), os.fsencode(header) if header else None,
                                       name.encode(), -1 if opt_level == 0 else opt_level, None)
        handle = self._load()
        d = _diag()
        try:
            _check(lib.o2m_model_compile(handle, ctypes.byref(options), ctypes.byref(d)), d)
        finally:
            lib.o2m_model_free(handle)

    def run(self, inputs, target="linalg", opt_level=2):
        """Runs the model on `inputs` (a dict from input name to array, or a
        sequence of arrays in input order) and returns a dict from output
        name to NumPy array. Arrays must have the input's dtype; other array
        likes (lists, scalars) are converted to it."""
        code = lib.o2m_target_from_name(str(target).encode())
        if code < 0:
            raise ValueError("unknown target %r" % (target,))
        arrays = self._arrange(inputs)
        n = len(arrays)
        data = (_capi.TensorData * max(n, 1))()
        keep = []
        for i, (value, a) in enumerate(zip(self.inputs, arrays)):
            dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            keep.append(dims)
            data[i] = _capi.TensorData(value.name.encode(), _DTYPE_OF[a.dtype], a.ndim, dims,
                                       a.ctypes.data if a.size else None, a.nbytes)
        config = _capi.RunConfig(code, int(opt_level))
        handle = self._load()
        results = ctypes.c_void_p()
        d = _diag()
        try:
            _check(lib.o2m_model_run(handle, ctypes.byref(config), n, data, ctypes.byref(results), ctypes.byref(d)), d)
            out = {}
            for i in range(lib.o2m_results_count(results)):
                t = lib.o2m_results_get(results, i).contents
                kind = _NUMPY_OF.get(t.dtype)
                if kind is None:
                    raise Error(4, "%s: output '%s' has ONNX dtype %d, which NumPy cannot hold"
                                % (self.path, t.name.decode(), t.dtype))
                shape = tuple(t.dims[k] for k in range(t.rank))
                raw = ctypes.string_at(t.data, t.nbytes) if t.nbytes else b""
                out[t.name.decode()] = np.frombuffer(raw, dtype=kind).reshape(shape).copy()
            return out
        finally:
            lib.o2m_results_free(results)
            lib.o2m_model_free(handle)

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
            arrays.append(np.ascontiguousarray(x, dtype=value.dtype))
        return arrays

    def __repr__(self):
        return "onnx2mlir.Model(%r)" % (self.path,)


def load(path, data_dir=None):
    """Loads, links and type-infers the ONNX model at `path` (external data
    from `data_dir`, default the model's folder)."""
    return Model(path, data_dir)
