"""make_resize.py OUT - a bilinear Resize (half_pixel) of [1, 2, 7, 9] to
[1, 2, 150, 170] (its weight and index tables are constants of a few
hundred entries each), its input, and the output NumPy computes as two
interpolation matrices: rows of (1 - t, t) at the two nearest inputs of
x = (o + 0.5) / scale - 0.5, clamped to the input's range."""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
shape_in, shape_out = (1, 2, 7, 9), (1, 2, 150, 170)
x = np.random.default_rng(5).standard_normal(shape_in).astype(np.float32)
node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear",
                        coordinate_transformation_mode="half_pixel")
graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)],
                          [numpy_helper.from_array(np.array(shape_out, np.int64), "sizes")])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/resize.onnx")
np.save(f"{out}/x.npy", x)


def interpolation(n_in, n_out):
    pos = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n_in - 1)
    m = np.zeros((n_out, n_in))
    m[np.arange(n_out), lo] += 1 - (pos - lo)
    m[np.arange(n_out), hi] += pos - lo
    return m


y = interpolation(7, 150) @ x.astype(np.float64) @ interpolation(9, 170).T
np.save(f"{out}/y.npy", y.astype(np.float32))
