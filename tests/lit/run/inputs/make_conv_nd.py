"""Float32 1-D and 3-D convolutions and 1-D to 3-D transposed ones of
constant weights (conv_nd.test): the JIT calls oneDNN's convolution in
ONNX's layout for them (lower_dnnl.c, rt_conv_nd.c). Writes DIR/conv_<case>.onnx with its input DIR/x_<case>.npy
and NumPy's output DIR/y_<case>.npy, and DIR/mixed.onnx (a 1-D and a 3-D
Conv and a 2-D ConvTranspose side by side, inputs x1, x3 and x2, outputs
y1, y3 and y2, for `compile`). Usage: DIR."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(11)


def reference(x, w, b, strides, pads, dilations, group):
    """Conv by its definition: every tap of every window, zeros outside."""
    s = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[i], pads[s + i]) for i in range(s)])
    n, c = x.shape[:2]
    f, cg = w.shape[:2]
    kernel = w.shape[2:]
    extent = [(kernel[i] - 1) * dilations[i] + 1 for i in range(s)]
    outs = [(x.shape[2 + i] - extent[i]) // strides[i] + 1 for i in range(s)]
    y = np.zeros([n, f] + outs)
    fg = f // group
    for o in range(f):
        g = o // fg
        for tap in np.ndindex(*kernel):
            window = tuple(slice(tap[i] * dilations[i], tap[i] * dilations[i] + (outs[i] - 1) * strides[i] + 1,
                                 strides[i]) for i in range(s))
            part = x[(slice(None), slice(g * cg, (g + 1) * cg)) + window]
            y[:, o] += np.tensordot(w[o][(slice(None),) + tap].astype(np.float64), part, axes=([0], [1]))
        if b is not None:
            y[:, o] += b[o]
    return y.astype(np.float32)


# name: x shape, weight shape, strides, pads (begin..., end...), dilations, group, bias, auto_pad
cases = {
    "grouped_1d": ([2, 6, 37], [8, 3, 5], [2], [3, 1], [2], 2, True, None),
    "same_1d": ([1, 5, 40], [7, 5, 4], [3], None, [1], 1, False, "SAME_UPPER"),
    "depthwise_1d": ([1, 16, 50], [16, 1, 3], [1], [1, 1], [1], 16, True, None),
    "video_3d": ([1, 4, 6, 9, 10], [5, 4, 3, 3, 3], [1, 2, 2], [1, 1, 0, 1, 1, 2], [1, 1, 1], 1, True, None),
    "grouped_3d": ([2, 6, 5, 7, 6], [4, 3, 2, 3, 1], [1, 1, 2], [0, 1, 0, 1, 0, 0], [2, 1, 1], 2, False, None),
    "stem_3d": ([1, 3, 4, 12, 12], [8, 3, 3, 7, 7], [1, 2, 2], [1, 3, 3, 1, 3, 3], [1, 1, 1], 1, True, None),
}


def reference_transposed(x, w, b, strides, dilations, group, pad_begin, out_size):
    """ConvTranspose by its definition: each input element's taps added where
    they land in the full result, which is then cropped from pad_begin to
    out_size elements (zeros where that runs past it)."""
    s = x.ndim - 2
    n, c = x.shape[:2]
    cg, fg = c // group, w.shape[1]
    kernel = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 for i in range(s)]
    y = np.zeros([n, fg * group] + full)
    for ic in range(c):
        g = ic // cg
        for tap in np.ndindex(*kernel):
            window = tuple(slice(tap[i] * dilations[i], tap[i] * dilations[i] + (x.shape[2 + i] - 1) * strides[i] + 1,
                                 strides[i]) for i in range(s))
            for o in range(fg):
                y[(slice(None), g * fg + o) + window] += x[:, ic].astype(np.float64) * w[(ic, o) + tap]
    cropped = np.zeros([n, fg * group] + list(out_size))
    keep = tuple(slice(0, min(out_size[i], full[i] - pad_begin[i])) for i in range(s))
    cropped[(slice(None), slice(None)) + keep] = y[(slice(None), slice(None)) + tuple(
        slice(pad_begin[i], pad_begin[i] + keep[i].stop) for i in range(s))]
    if b is not None:
        cropped += b.reshape([1, -1] + [1] * s)
    return cropped.astype(np.float32)


# name: x shape, weight shape [C, F/g, k...], strides, dilations, group, bias, attributes
transposed_cases = {
    "t_grouped_1d": ([2, 6, 20], [6, 2, 4], [3], [2], 3, True, dict(pads=[1, 2])),
    "t_up_2d": ([1, 8, 7, 9], [8, 4, 4, 4], [2, 2], [1, 1], 1, True, dict(pads=[1, 1, 1, 1], output_padding=[1, 0])),
    "t_outpad_2d": ([1, 4, 5, 6], [4, 3, 3, 3], [2, 2], [1, 1], 1, False, dict(output_padding=[1, 1])),
    "t_shape_2d": ([1, 4, 7, 9], [4, 2, 3, 3], [2, 2], [1, 1], 2, True, dict(output_shape=[15, 17])),
    "t_same_1d": ([1, 5, 11], [5, 3, 5], [2], [1], 1, True, dict(auto_pad="SAME_UPPER")),
    "t_video_3d": ([1, 4, 3, 5, 6], [4, 3, 2, 3, 3], [1, 2, 2], [1, 1, 1], 1, True, dict(pads=[0, 1, 1, 0, 1, 0])),
}


def transposed_node(case, x_name, y_name, inits):
    x_shape, w_shape, strides, dilations, group, bias, attrs = transposed_cases[case]
    s = len(strides)
    w = (rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))).astype(np.float32)
    b = (rng.standard_normal(w_shape[1] * group) * 0.1).astype(np.float32) if bias else None
    inits.append(numpy_helper.from_array(w, "w_" + case))
    inputs = [x_name, "w_" + case]
    if bias:
        inits.append(numpy_helper.from_array(b, "b_" + case))
        inputs.append("b_" + case)
    extent = [(w_shape[2 + i] - 1) * dilations[i] + 1 for i in range(s)]
    full = [(x_shape[2 + i] - 1) * strides[i] + extent[i] + attrs.get("output_padding", [0] * s)[i] for i in range(s)]
    if "output_shape" in attrs:  # pads 0 (NOTSET): the full result cut to the shape
        pad_begin, out_size = [0] * s, attrs["output_shape"]
    elif attrs.get("auto_pad") == "SAME_UPPER":  # out = in * stride, the smaller half of the crop first
        out_size = [x_shape[2 + i] * strides[i] for i in range(s)]
        pad_begin = [(full[i] - out_size[i]) // 2 for i in range(s)]
    else:
        pads = attrs.get("pads", [0] * 2 * s)
        pad_begin, out_size = pads[:s], [full[i] - pads[i] - pads[s + i] for i in range(s)]
    x = rng.standard_normal(x_shape).astype(np.float32)
    y = reference_transposed(x, w, b, strides, dilations, group, pad_begin, out_size)
    node = helper.make_node("ConvTranspose", inputs, [y_name], kernel_shape=w_shape[2:], strides=strides,
                            dilations=dilations, group=group, **attrs)
    return node, x, y


def same_pads(x_shape, w_shape, strides, dilations):
    s = len(strides)
    begin, end = [], []
    for i in range(s):
        size = x_shape[2 + i]
        extent = (w_shape[2 + i] - 1) * dilations[i] + 1
        total = max(0, (-(-size // strides[i]) - 1) * strides[i] + extent - size)
        begin.append(total // 2)
        end.append(total - total // 2)
    return begin + end


def conv_node(case, x_name, y_name, inits):
    x_shape, w_shape, strides, pads, dilations, group, bias, auto_pad = cases[case]
    w = (rng.standard_normal(w_shape) / np.sqrt(np.prod(w_shape[1:]))).astype(np.float32)
    b = (rng.standard_normal(w_shape[0]) * 0.1).astype(np.float32) if bias else None
    inits.append(numpy_helper.from_array(w, "w_" + case))
    inputs = [x_name, "w_" + case]
    if bias:
        inits.append(numpy_helper.from_array(b, "b_" + case))
        inputs.append("b_" + case)
    attrs = dict(kernel_shape=w_shape[2:], strides=strides, dilations=dilations, group=group)
    if auto_pad:
        attrs["auto_pad"] = auto_pad
        pads = same_pads(x_shape, w_shape, strides, dilations)
    else:
        attrs["pads"] = pads
    x = rng.standard_normal(x_shape).astype(np.float32)
    y = reference(x, w, b, strides, pads, dilations, group)
    return helper.make_node("Conv", inputs, [y_name], **attrs), x, y


def save(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, "%s/%s.onnx" % (out, name))


for case in cases:
    inits = []
    node, x, y = conv_node(case, "x", "y", inits)
    np.save("%s/x_%s.npy" % (out, case), x)
    np.save("%s/y_%s.npy" % (out, case), y)
    save("conv_" + case, [node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))], inits)

for case in transposed_cases:
    inits = []
    node, x, y = transposed_node(case, "x", "y", inits)
    np.save("%s/x_%s.npy" % (out, case), x)
    np.save("%s/y_%s.npy" % (out, case), y)
    save("conv_" + case, [node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))], inits)

inits = []
one, x1, y1 = conv_node("grouped_1d", "x1", "y1", inits)
three, x3, y3 = conv_node("video_3d", "x3", "y3", inits)
up, x2, y2 = transposed_node("t_up_2d", "x2", "y2", inits)
for name, v in (("x1", x1), ("x3", x3), ("x2", x2), ("y1", y1), ("y3", y3), ("y2", y2)):
    np.save("%s/mixed_%s.npy" % (out, name), v)
save("mixed", [one, three, up], [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape))
                                 for n, v in (("x1", x1), ("x3", x3), ("x2", x2))],
     [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape)) for n, v in (("y1", y1), ("y3", y3), ("y2", y2))],
     inits)
