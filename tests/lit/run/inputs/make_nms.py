"""make_nms.py OUT - NonMaxSuppression on 2 batches x 3 classes x 300
random boxes (corners in either order, many overlaps, tied scores),
max_output_boxes_per_class 55, IoU threshold 0.4, score threshold 0.2.
Writes nms.onnx, boxes.npy and scores.npy."""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
rng = np.random.default_rng(9)
corner = rng.uniform(0, 10, (2, 300, 2))
size = rng.uniform(2, 6, (2, 300, 2))
boxes = np.concatenate([corner, corner + size], axis=2)[:, :, [0, 1, 2, 3]]
boxes[:, ::7] = boxes[:, ::7][:, :, [2, 3, 0, 1]]  # flipped corners
scores = rng.uniform(0, 1, (2, 3, 300)).round(2)  # ties
node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "thr"], ["selected"])
graph = helper.make_graph(
    [node], "nms",
    [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [2, 300, 4]),
     helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 3, 300])],
    [helper.make_tensor_value_info("selected", TensorProto.INT64, ["n", 3])],
    [numpy_helper.from_array(np.array([55], np.int64), "max_out"), numpy_helper.from_array(np.array([0.4], np.float32), "iou"),
     numpy_helper.from_array(np.array([0.2], np.float32), "thr")])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/nms.onnx")
np.save(f"{out}/boxes.npy", boxes.astype(np.float32))
np.save(f"{out}/scores.npy", scores.astype(np.float32))
