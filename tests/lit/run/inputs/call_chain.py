"""call_chain.py LIB X EXPECTED: calls chain_run of a library `compile`
made of make_chain.py's model and compares its output with EXPECTED."""
import ctypes
import sys

import numpy as np


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int32), ("rank", ctypes.c_int32), ("dims", ctypes.c_int64 * 16),
                ("data", ctypes.c_void_p)]


lib = ctypes.CDLL(sys.argv[1])
x, want = np.load(sys.argv[2]), np.load(sys.argv[3])
t_in, t_out = Tensor(1, 2, (ctypes.c_int64 * 16)(*x.shape), x.ctypes.data), Tensor()
status = lib.chain_run(ctypes.byref(t_in), 1, ctypes.byref(t_out), 1)
assert status == 0, status
got = np.ctypeslib.as_array(ctypes.cast(t_out.data, ctypes.POINTER(ctypes.c_float)), shape=tuple(t_out.dims[:2])).copy()
lib.chain_free_outputs(ctypes.byref(t_out), 1)
assert np.allclose(got, want, rtol=1e-4, atol=1e-4), abs(got - want).max()
print("library ok")
