#!/usr/bin/python3
"""Writes the inputs of the StableHLO lit tests (tests/lit/stablehlo/*.test):
small ONNX models (the tests also reuse ../../tosa/inputs/*.onnx). Run from
tests/lit/stablehlo/inputs with Debian's python3-onnx:
    /usr/bin/python3 make_stablehlo_inputs.py
"""
import os
import sys

from onnx import TensorProto as T
from onnx import helper as h

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../linalg/inputs"))
import numpy as np  # noqa: E402
from lit_models import V, init, model  # noqa: E402

F, I, B, U8, U32 = T.FLOAT, T.INT64, T.BOOL, T.UINT8, T.UINT32

# A dynamic batch dim: broadcasting needs a shape tensor
# (get_dimension_size, dynamic_broadcast_in_dim); Erf has no StableHLO op
# and comes from the shared layer's decomposition.
model("shlo_dynamic", [h.make_node("Add", ["a", "b"], ["s"]),
                       h.make_node("Erf", ["s"], ["y"])],
      [V("a", F, ["N", 3]), V("b", F, [3])], [V("y", F, ["N", 3])])

# Unsigned integers keep their signedness in the type (ui8, ui32): divide,
# compare and the shifts need no extra ops; Sign of unsigned is x != 0.
model("shlo_unsigned", [h.make_node("Div", ["u", "v"], ["q"]),
                        h.make_node("BitShift", ["w", "n"], ["r"], direction="RIGHT"),
                        h.make_node("Sign", ["u"], ["g"]),
                        h.make_node("Less", ["u", "v"], ["l"])],
      [V("u", U8, [4]), V("v", U8, [4]), V("w", U32, [4]), V("n", U32, [4])],
      [V("q", U8, [4]), V("r", U32, [4]), V("g", U8, [4]), V("l", B, [4])])

# Ops the shared layer writes in simpler ones for StableHLO: a nearest
# Resize (a Gather of the chosen rows per axis) and a one-sided DFT
# (products with constant twiddle matrices).
model("shlo_resize_dft", [h.make_node("Resize", ["x", "", "scales"], ["r"], mode="nearest"),
                          h.make_node("DFT", ["s", "", "axis"], ["d"], onesided=1)],
      [V("x", F, [1, 1, 2, 2]), V("s", F, [1, 8, 1])], [V("r", F, [1, 1, 4, 4]), V("d", F, [1, 5, 2])],
      [init("scales", np.array([1, 1, 2, 2], np.float32)), init("axis", np.array(1, np.int64))])

# A Slice along a static axis of a tensor with a dynamic batch dim:
# real_dynamic_slice, its limit for the batch the dim's size at run time.
model("shlo_dynamic_slice", [h.make_node("Slice", ["x", "st", "en", "ax"], ["y"])],
      [V("x", F, ["N", 6])], [V("y", F, ["N", 3])],
      [init("st", np.array([1], np.int64)), init("en", np.array([4], np.int64)),
       init("ax", np.array([1], np.int64))])
