"""numpy_conv.py - ONNX's 2-D Conv in NumPy (float64 sums, float32 result),
the oracle make_cnn.py and make_conv_integer.py share: x [N, C, H, W],
w [F, C / group, KH, KW], pads top, left, bottom, right."""
import numpy as np


def conv(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - (kh - 1) * dilations[0] - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    y = np.zeros((n, f, oh, ow), np.float64)
    fg = f // group
    for o in range(f):
        g = o // fg
        for u in range(kh):
            for v in range(kw):
                r0, c0 = u * dilations[0], v * dilations[1]
                patch = xp[:, g * cg:(g + 1) * cg, r0:r0 + strides[0] * (oh - 1) + 1:strides[0],
                           c0:c0 + strides[1] * (ow - 1) + 1:strides[1]]
                y[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, u, v])
        if b is not None:
            y[:, o] += b[o]
    return y.astype(np.float32)
