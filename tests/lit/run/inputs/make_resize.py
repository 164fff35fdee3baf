"""make_resize.py OUT - a bilinear Resize (half_pixel) of [1, 2, 7, 9] to
[1, 2, 150, 170] (its weight and index tables are constants of a few
hundred entries each), its input, and the output NumPy computes as two
interpolation matrices: rows of (1 - t, t) at the two nearest inputs of
x = (o + 0.5) / scale - 0.5, clamped to the input's range."""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]


def write(name, shape_in, shape_out, seed):
    """A linear half_pixel Resize of shape_in to shape_out as OUT/NAME.onnx;
    returns its input."""
    x = np.random.default_rng(seed).standard_normal(shape_in).astype(np.float32)
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear",
                            coordinate_transformation_mode="half_pixel")
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)],
                              [numpy_helper.from_array(np.array(shape_out, np.int64), "sizes")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/{name}.onnx")
    return x


x = write("resize", (1, 2, 7, 9), (1, 2, 150, 170), 5)
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

# resize3d.onnx: a trilinear Resize of [1, 2, 5, 12, 6] to [1, 2, 9, 4, 6]
# (depth up, height down, width kept: the lowering's one pass per resized
# axis, each on the last's result) and its NumPy output, y3d.npy.
x3 = write("resize3d", (1, 2, 5, 12, 6), (1, 2, 9, 4, 6), 6)
np.save(f"{out}/x3d.npy", x3)
y3 = np.einsum("dD,hH,ncDHw->ncdhw", interpolation(5, 9), interpolation(12, 4), x3.astype(np.float64))
np.save(f"{out}/y3d.npy", y3.astype(np.float32))
