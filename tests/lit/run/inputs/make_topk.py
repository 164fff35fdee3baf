"""make_topk.py OUT - TopK whose K the graph computes from the data (the
count of elements above 1, at most 12), as detection models compute
min(candidates, top-n): the output's dim along the axis is known only at
run time. Writes topk.onnx, x.npy (with a tie, which the lower index wins)
and the values and indices NumPy's stable sort gives."""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
x = np.random.default_rng(3).standard_normal((3, 12)).astype(np.float32)
x[1, 3] = x[1, 7] = 1.5
nodes = [helper.make_node("Greater", ["x", "one"], ["big"]),
         helper.make_node("Cast", ["big"], ["big64"], to=TensorProto.INT64),
         helper.make_node("ReduceSum", ["big64", "axes"], ["count"], keepdims=0),
         helper.make_node("Unsqueeze", ["count", "zero"], ["count1"]),
         helper.make_node("Min", ["count1", "cap"], ["k"]),
         helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1)]
graph = helper.make_graph(
    nodes, "topk", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 12])],
    [helper.make_tensor_value_info("values", TensorProto.FLOAT, [3, "k"]),
     helper.make_tensor_value_info("indices", TensorProto.INT64, [3, "k"])],
    [numpy_helper.from_array(np.array(1, np.float32), "one"), numpy_helper.from_array(np.array([0, 1], np.int64), "axes"),
     numpy_helper.from_array(np.array([0], np.int64), "zero"), numpy_helper.from_array(np.array([12], np.int64), "cap")])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/topk.onnx")
np.save(f"{out}/x.npy", x)
k = min(int((x > 1).sum()), 12)
order = np.argsort(-x, axis=1, kind="stable")[:, :k]
np.save(f"{out}/values.npy", np.take_along_axis(x, order, axis=1))
np.save(f"{out}/indices.npy", order.astype(np.int64))
print(k)
