#!/usr/bin/python3
"""Writes the inputs of resize.test (Resize and GridSample on the Linalg
target): one small ONNX model per case, parameters as constants, most with
a symbolic batch dim, and .npy inputs. Run from tests/lit/linalg/inputs with
Debian's python3-onnx:
    /usr/bin/python3 make_resize_inputs.py
The expected values in resize.test come from ONNX's reference implementation
(onnx/reference/ops/op_resize.py, op_grid_sample.py) on these inputs.
"""
import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

import lit_models
from lit_models import V, init, npy

F, H, U8 = T.FLOAT, T.FLOAT16, T.UINT8


def model(*args, opset=19, **kw):
    lit_models.model(*args, opset=opset, **kw)


# bilinear upsampling (half_pixel) over a symbolic batch: N and C keep scale 1
model("resize_linear", [h.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
      [V("x", F, ["N", 1, 2, 2])], [V("y", F, None)],
      [init("s", np.array([1, 1, 2, 2], np.float32))])
# the same with every dim symbolic: taps computed in the body from linalg.index
model("resize_dynamic", [h.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
      [V("x", F, ["N", "C", "H", "W"])], [V("y", F, None)],
      [init("s", np.array([1, 1, 2, 2], np.float32))])
# nearest (round_prefer_ceil, asymmetric) to sizes on axes (3, 2), not_larger, uint8
model("resize_nearest_u8", [h.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="nearest",
                                        axes=[3, 2], keep_aspect_ratio_policy="not_larger",
                                        nearest_mode="round_prefer_ceil",
                                        coordinate_transformation_mode="asymmetric")],
      [V("x", U8, ["N", 1, 2, 3])], [V("y", U8, None)],
      [init("sz", np.array([7, 5], np.int64))])
# tf_crop_and_resize with an roi partly outside the input, extrapolation_value
model("resize_crop", [h.make_node("Resize", ["x", "roi", "", "sz"], ["y"], mode="linear",
                                  axes=[2], coordinate_transformation_mode="tf_crop_and_resize",
                                  extrapolation_value=-1.0)],
      [V("x", F, ["N", 1, 4])], [V("y", F, None)],
      [init("roi", np.array([0.5, 1.5], np.float32)), init("sz", np.array([3], np.int64))])
# antialiased cubic downscale of f16 (computed in f32)
model("resize_cubic_aa", [h.make_node("Resize", ["x", "", "s"], ["y"], mode="cubic", antialias=1,
                                      axes=[1])],
      [V("x", H, [1, 8])], [V("y", H, None)], [init("s", np.array([0.5], np.float32))])
# scales read at run time only: import refuses them
model("resize_runtime_scales", [h.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest")],
      [V("x", F, [1, 1, 2, 2]), V("s", F, [4])], [V("y", F, None)])
# GridSample: bilinear 2-D with zeros padding; nearest 3-D with reflection
model("grid_sample", [h.make_node("GridSample", ["x", "g"], ["y"], mode="linear")],
      [V("x", F, ["N", 1, 2, 2]), V("g", F, ["N", 1, 3, 2])], [V("y", F, None)], opset=20)
model("grid_sample_3d", [h.make_node("GridSample", ["x", "g"], ["y"], mode="nearest",
                                     padding_mode="reflection", align_corners=1)],
      [V("x", F, [1, 1, 2, 2, 2]), V("g", F, [1, 1, 1, 2, 3])], [V("y", F, None)], opset=22)

npy("rs_x1122", np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2))
npy("rs_u8", np.array([10, 20, 30, 40, 50, 60], np.uint8).reshape(1, 1, 2, 3))
npy("rs_x114", np.array([1, 2, 4, 8], np.float32).reshape(1, 1, 4))
npy("rs_h18", np.array([0, 1, 2, 3, 4, 5, 6, 7], np.float16).reshape(1, 8))
npy("gs_g1132", np.array([[-1, -1], [0, 0], [0.5, 1.2]], np.float32).reshape(1, 1, 3, 2))
npy("gs_x12222", np.arange(8, dtype=np.float32).reshape(1, 1, 2, 2, 2))
npy("gs_g3d", np.array([[1.6, -1, 0.2], [-0.4, 0.9, 1]], np.float32).reshape(1, 1, 1, 2, 3))
