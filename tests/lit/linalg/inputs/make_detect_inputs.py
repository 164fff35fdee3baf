#!/usr/bin/python3
"""Writes the inputs of detect.test (NonMaxSuppression, RoiAlign and
MaxUnpool on the Linalg target): one small ONNX model per case, with
symbolic dims and inputs known only at run time, and .npy inputs. Run from
tests/lit/linalg/inputs with Debian's python3-onnx:
    /usr/bin/python3 make_detect_inputs.py
The expected values in detect.test come from ONNX's reference
implementation (onnx/reference/ops/op_non_max_suppression.py,
op_roi_align.py, op_max_unpool.py) on these inputs.
"""
import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

from lit_models import V, init, model, npy

F, I = T.FLOAT, T.INT64

# NonMaxSuppression, opset 11: every limit read at run time, a symbolic box count
model("nms_rt", [h.make_node("NonMaxSuppression", ["b", "s", "m", "iou", "st"], ["y"])],
      [V("b", F, [1, "S", 4]), V("s", F, [1, 1, "S"]), V("m", I, [1]), V("iou", F, [1]),
       V("st", F, [1])], [V("y", I, None)], opset=11)
# opset 10, center_point_box 1, two classes and two batches, limits as
# constants, no score_threshold
model("nms_const", [h.make_node("NonMaxSuppression", ["b", "s", "m", "iou"], ["y"],
                                center_point_box=1)],
      [V("b", F, [2, 6, 4]), V("s", F, [2, 2, 6])], [V("y", I, None)],
      [init("m", np.array([2], np.int64)), init("iou", np.array([0.5], np.float32))], opset=10)
# no max_output_boxes_per_class: nothing is selected
model("nms_none", [h.make_node("NonMaxSuppression", ["b", "s"], ["y"])],
      [V("b", F, [1, "S", 4]), V("s", F, [1, 1, "S"])], [V("y", I, None)], opset=11)

boxes = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9],
                  [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]], np.float32)
npy("nms_b", boxes[None])
npy("nms_s", np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], np.float32))
npy("nms_m", np.array([3], np.int64))
npy("nms_iou", np.array([0.5], np.float32))
npy("nms_st", np.array([0.4], np.float32))
centers = np.array([[0.5, 0.5, 1, 1], [0.5, 0.6, 1, 1], [0.5, 0.4, 1, 1],
                    [0.5, 10.5, 1, 1], [0.5, 10.6, 1, 1], [0.5, 100.5, 1, 1]], np.float32)
npy("nms_cb", np.stack([centers, centers[::-1]]))
npy("nms_cs", np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]],
                        [[0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [0.3, 0.9, 0.1, 0.8, 0.2, 0.7]]],
                       np.float32))

# RoiAlign, opset 16: half_pixel (the default), adaptive sampling
# (sampling_ratio 0), spatial_scale 0.5, symbolic batch and ROI counts
model("roi_avg", [h.make_node("RoiAlign", ["x", "r", "bi"], ["y"], output_height=2,
                              output_width=3, spatial_scale=0.5)],
      [V("x", F, ["N", 2, 4, 4]), V("r", F, ["R", 4]), V("bi", I, ["R"])], [V("y", F, None)],
      opset=16)
# opset 10: mode max, output_half_pixel (the opset-10 behaviour), 2x2 samples
model("roi_max10", [h.make_node("RoiAlign", ["x", "r", "bi"], ["y"], mode="max", output_height=2,
                                output_width=2, sampling_ratio=2)],
      [V("x", F, [2, 2, 4, 4]), V("r", F, [2, 4]), V("bi", I, [2])], [V("y", F, None)], opset=10)
npy("roi_x", (np.arange(64, dtype=np.float32).reshape(2, 2, 4, 4) * 0.25) % 3.0)
npy("roi_r", np.array([[1, 1, 6, 5], [0, 2, 3.5, 7]], np.float32))
npy("roi_bi", np.array([1, 0], np.int64))

# MaxUnpool: output_shape read at run time (pads the unpooled tensor)
model("unpool_rt", [h.make_node("MaxUnpool", ["x", "i", "os"], ["y"], kernel_shape=[2, 2],
                                strides=[2, 2])],
      [V("x", F, ["N", 1, 2, 2]), V("i", I, ["N", 1, 2, 2]), V("os", I, [4])], [V("y", F, None)],
      opset=22)
# inferred output (with pads), two channels: indices count over the whole tensor
model("unpool_pads", [h.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[3, 3],
                                  strides=[2, 2], pads=[1, 1, 1, 1])],
      [V("x", F, ["N", 2, 2, 2]), V("i", I, ["N", 2, 2, 2])], [V("y", F, None)], opset=11)
npy("up_x", np.array([5, 6, 7, 8], np.float32).reshape(1, 1, 2, 2))
npy("up_i", np.array([5, 7, 13, 15], np.int64).reshape(1, 1, 2, 2))
npy("up_os", np.array([1, 1, 5, 5], np.int64))
npy("up_x2", np.arange(1, 9, dtype=np.float32).reshape(1, 2, 2, 2))
npy("up_i2", np.array([0, 2, 6, 8, 9, 13, 14, 17], np.int64).reshape(1, 2, 2, 2))
