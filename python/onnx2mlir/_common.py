"""_common.py - what the module's parts share: the error and warning
classes, the diagnostic record wired to Python's warnings, and the table
between ONNX's dtype numbers and NumPy's dtypes."""
import warnings

import numpy as np

from . import _capi
from ._capi import lib

# ONNX's TensorProto.DataType numbers and the NumPy dtypes they hold
NUMPY_OF = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32,
            7: np.int64, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}
DTYPE_OF = {np.dtype(v): k for k, v in NUMPY_OF.items()}


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


def new_diag():
    d = _capi.Diag()
    d.warn = _WARN
    return d


def check(status, diag):
    if status:
        raise Error(status, diag.message.decode(errors="replace"))


class Handle:
    """A library handle the object owns: close() frees it once (with the
    class's _free function), also when the object is collected or leaves
    a `with` block."""

    _handle = None

    def close(self):
        if self._handle:
            type(self)._free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
