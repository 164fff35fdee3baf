"""_session.py - onnx2mlir.InferenceSession: a model compiled once and run
many times, with onnxruntime's call shape, over the C API's o2m_session_*
(include/onnx2mlir.h says how variants are compiled and kept).

    sess = onnx2mlir.InferenceSession("model.onnx")
    [probs] = sess.run(None, {"image": batch})

The library releases the GIL while the model runs (ctypes drops it for
every call into the library), so Python threads can share one session.
"""
import ctypes
import os

import numpy as np

from . import _capi
from ._capi import lib
from ._common import Error, Handle, NUMPY_OF, DTYPE_OF, check, new_diag

_SHAPES = {"auto": 0, "generic": 1, "specialize": 2}

# onnxruntime's names of the element types (NodeArg.type)
_TYPE_NAMES = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
               9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64",
               15: "complex128", 16: "bfloat16"}


class NodeArg:
    """An input or output as onnxruntime describes it: `name`, `type`
    ("tensor(float)", ...) and `shape` (a list of ints, dim names or None
    for dims the model leaves unnamed)."""

    def __init__(self, desc):
        self.name = desc.name.decode()
        self.type = "tensor(%s)" % _TYPE_NAMES.get(desc.dtype, "undefined")
        self.shape = None
        if desc.rank >= 0:
            self.shape = []
            for k in range(desc.rank):
                if desc.dims[k] >= 0:
                    self.shape.append(int(desc.dims[k]))
                else:
                    name = desc.dim_names[k]
                    self.shape.append(name.decode() if name else None)
        self.onnx_dtype = desc.dtype
        kind = NUMPY_OF.get(desc.dtype)
        self.dtype = np.dtype(kind) if kind is not None else None

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


class InferenceSession(Handle):
    """Loads the model (a path, or the model's bytes) and compiles it for
    `target` ("linalg" or "tosa"). `run(output_names, feeds)` returns the
    outputs as a list of NumPy arrays.

    threads: the calling thread runs each call (None, 0 and 1 mean that).
    cache: whether compiled code is kept in and loaded from the disk cache
    (cache_dir, default $XDG_CACHE_HOME/onnx2mlir). shapes: "auto" (code
    for the first sizes, then one variant for every other size), "generic"
    or "specialize" (a variant per size); max_variants bounds how many are
    kept. sess_options and providers are taken for onnxruntime's call shape
    (sess_options.intra_op_num_threads is read; providers are ignored: this
    is a CPU compiler)."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, threads=None, target="linalg",
                 opt_level=2, cache=True, cache_dir=None, shapes="auto", max_variants=8, data_dir=None):
        self._handle = None
        code = lib.o2m_target_from_name(str(target).encode())
        if code < 0:
            raise ValueError("unknown target %r (linalg or tosa)" % (target,))
        if shapes not in _SHAPES:
            raise ValueError("shapes takes %s, not %r" % (", ".join(map(repr, _SHAPES)), shapes))
        if threads is None and sess_options is not None:
            threads = getattr(sess_options, "intra_op_num_threads", 0) or 0
        if threads is not None and (not isinstance(threads, int) or threads < 0):
            raise ValueError("threads takes a count of threads (0: the default), not %r" % (threads,))
        options = _capi.SessionOptions(code, int(opt_level), int(threads or 0), 0 if cache else 1,
                                       os.fsencode(cache_dir) if cache_dir else None, int(max_variants),
                                       _SHAPES[shapes], os.fsencode(data_dir) if data_dir else None)
        handle = ctypes.c_void_p()
        d = new_diag()
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            data = bytes(path_or_bytes)
            self._path = "<bytes>"
            check(lib.o2m_session_create_from_bytes(data, len(data), b"<bytes>", ctypes.byref(options),
                                                    ctypes.byref(handle), ctypes.byref(d)), d)
        else:
            self._path = os.fspath(path_or_bytes)
            check(lib.o2m_session_create(os.fsencode(self._path), ctypes.byref(options), ctypes.byref(handle),
                                         ctypes.byref(d)), d)
        self._handle = handle
        self._inputs = self._describe(lib.o2m_session_input_count, lib.o2m_session_input)
        self._outputs = self._describe(lib.o2m_session_output_count, lib.o2m_session_output)
        self._input_index = {a.name: i for i, a in enumerate(self._inputs)}
        self._output_index = {a.name: i for i, a in enumerate(self._outputs)}

    def _describe(self, count, describe):
        out = []
        for i in range(count(self._handle)):
            desc = _capi.ValueDesc()
            d = new_diag()
            check(describe(self._handle, i, ctypes.byref(desc), ctypes.byref(d)), d)
            out.append(NodeArg(desc))
        return out

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def _arrays(self, feeds):
        if not isinstance(feeds, dict):
            raise Error(5, "%s: run() takes a dict from input name to array, not %s" % (self._path, type(feeds).__name__))
        arrays = [None] * len(self._inputs)
        for name, x in feeds.items():
            i = self._input_index.get(name)
            if i is None:
                raise Error(5, "%s: the model has no input '%s' (its inputs: %s)"
                            % (self._path, name, ", ".join(a.name for a in self._inputs)))
            want = self._inputs[i].dtype
            if not isinstance(x, np.ndarray):
                x = np.asarray(x, dtype=want)
            if not x.flags.c_contiguous:
                x = x.copy(order="C")  # keeps 0-d arrays 0-d (np.ascontiguousarray would not)
            arrays[i] = x
        missing = [a.name for a, x in zip(self._inputs, arrays) if x is None]
        if missing:
            raise Error(5, "%s: input %s is missing" % (self._path, ", ".join(map(repr, missing))))
        return arrays

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model on `input_feed` (a dict from input name to array;
        0-d arrays are scalars) and returns the outputs named in
        `output_names` (None: all, in the graph's order) as NumPy arrays. An
        array must have the input's dtype, rank and fixed sizes; else
        onnx2mlir.Error names the input and what was expected."""
        if self._handle is None:
            raise Error(5, "%s: the session is closed" % self._path)
        arrays = self._arrays(input_feed)
        n = len(arrays)
        data = (_capi.TensorData * max(n, 1))()
        keep = []
        for i, a in enumerate(arrays):
            dtype = DTYPE_OF.get(a.dtype)
            if dtype is None:
                raise Error(5, "%s: input '%s' must be %s but was given NumPy dtype %s"
                            % (self._path, self._inputs[i].name, self._inputs[i].type, a.dtype))
            dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
            keep.append(dims)
            data[i] = _capi.TensorData(None, dtype, a.ndim, dims, a.ctypes.data if a.nbytes else None, a.nbytes)
        results = ctypes.c_void_p()
        d = new_diag()
        check(lib.o2m_session_run(self._handle, n, data, ctypes.byref(results), ctypes.byref(d)), d)
        try:
            if output_names is None:
                wanted = range(len(self._outputs))
            else:
                wanted = []
                for name in output_names:
                    if name not in self._output_index:
                        raise Error(5, "%s: the model has no output '%s' (its outputs: %s)"
                                    % (self._path, name, ", ".join(a.name for a in self._outputs)))
                    wanted.append(self._output_index[name])
            return [_to_numpy(lib.o2m_results_get(results, i).contents, self._path) for i in wanted]
        finally:
            lib.o2m_results_free(results)

    def stats(self):
        """What the session did: calls, compiles, cache_loads, evictions,
        variants, generic (whether the generic variant is held), compile_ms,
        generic_refused (why sizes each get their own code, or None)."""
        if self._handle is None:
            raise Error(5, "%s: the session is closed" % self._path)
        st = _capi.SessionStats()
        d = new_diag()
        check(lib.o2m_session_get_stats(self._handle, ctypes.byref(st), ctypes.byref(d)), d)
        out = {name: getattr(st, name) for name, _ in _capi.SessionStats._fields_}
        if out["generic_refused"] is not None:
            out["generic_refused"] = out["generic_refused"].decode(errors="replace")
        return out

    _free = staticmethod(lib.o2m_session_free)  # close(): frees the session; no call may be in flight

    def __repr__(self):
        return "onnx2mlir.InferenceSession(%r)" % (self._path,)


def _to_numpy(t, path):
    kind = NUMPY_OF.get(t.dtype)
    if kind is None:
        raise Error(4, "%s: output '%s' has ONNX dtype %d, which NumPy cannot hold" % (path, t.name.decode(), t.dtype))
    shape = tuple(t.dims[k] for k in range(t.rank))
    out = np.empty(shape, dtype=kind)
    if t.nbytes:
        ctypes.memmove(out.ctypes.data, t.data, t.nbytes)
    return out
