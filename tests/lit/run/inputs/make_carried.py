#!/usr/bin/python3
"""make_carried.py OUT - carried.test's models of the dtypes TOSA carries in
int8 (int4, uint4, int2, uint2; float8 e4m3fnuz, e5m2fnuz, e8m0; float4
e2m1), opset 25:
- encode.onnx: x [n] float32 cast to each of them (each saturate, each e8m0
  round_mode), the codes and the codes cast back to float32 as outputs; x is
  every (1 + k/32) 2^e for e in [-150, 130], both signs, one ulp either
  side (the formats' values, their midpoints and the ties between them),
  zeros, infinities, NaN and f32 subnormals. ints.onnx: y [m] in
  [-40, 40] by quarters cast to the 2- and 4-bit integers.
- decode.onnx: one input per dtype holding each of its codes once, cast to
  float32, and passed through (Identity) as an output of its own dtype.
`make_carried.py check A B` compares two `run` output folders: the codes
byte for byte, floats with NaN equal to NaN; prints "same N" or the first
difference. This onnx predates the dtypes: their numbers are written by
hand."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

FLOAT = TensorProto.FLOAT
F8E4M3FNUZ, F8E5M2FNUZ, UINT4, INT4, F4E2M1, F8E8M0, UINT2, INT2 = 18, 20, 21, 22, 23, 24, 25, 26
BITS = {F8E4M3FNUZ: 8, F8E5M2FNUZ: 8, F8E8M0: 8, UINT4: 4, INT4: 4, F4E2M1: 4, UINT2: 2, INT2: 2}


def check(a, b):
    names = sorted(f for f in os.listdir(a) if f.endswith(".pb"))
    for name in names:
        ta, tb = TensorProto(), TensorProto()
        ta.ParseFromString(open(os.path.join(a, name), "rb").read())
        tb.ParseFromString(open(os.path.join(b, name), "rb").read())
        if ta.data_type != tb.data_type or list(ta.dims) != list(tb.dims):
            sys.exit("%s: dtype/shape %d %s vs %d %s" % (name, ta.data_type, ta.dims, tb.data_type, tb.dims))
        if ta.data_type == FLOAT:
            fa, fb = np.frombuffer(ta.raw_data, np.float32), np.frombuffer(tb.raw_data, np.float32)
            bad = ~((fa == fb) | (np.isnan(fa) & np.isnan(fb)))
        else:
            fa, fb = np.frombuffer(ta.raw_data, np.uint8), np.frombuffer(tb.raw_data, np.uint8)
            bad = fa != fb
        if bad.any():
            i = int(np.argmax(bad))
            sys.exit("%s: element %d: %r vs %r" % (name, i, fa[i], fb[i]))
    print("same", len(names))


def save_model(nodes, inputs, outputs, path):
    graph = helper.make_graph(nodes, os.path.basename(path), inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 11
    open(path, "wb").write(model.SerializeToString())


def value(name, dtype, n):
    v = onnx.ValueInfoProto()
    v.name = name
    v.type.tensor_type.elem_type = dtype
    v.type.tensor_type.shape.dim.add().dim_value = n
    return v


def packed(name, codes, bits):
    t = TensorProto()
    t.name = name
    t.data_type = {8: F8E8M0, 4: UINT4, 2: UINT2}[bits]
    t.dims.append(len(codes))
    per = 8 // bits
    flat = np.append(np.asarray(codes, np.uint8), np.zeros((-len(codes)) % per, np.uint8))
    raw = np.zeros(len(flat) // per, np.uint8)
    for k in range(per):
        raw |= flat[k::per] << (k * bits)
    t.raw_data = raw.tobytes()
    return t


def main(out):
    grid = [(1 + k / 32) * 2.0 ** e for e in range(-150, 131) for k in range(32)]
    base = np.array([g for g in grid if g < 3.4e38], np.float32)
    ulp = np.spacing(base)
    x = np.concatenate([base, base - ulp, base + ulp, [0, np.inf, np.nan, 2.0 ** -149, 3.4e38]]).astype(np.float32)
    x = np.concatenate([x, -x])
    np.save(os.path.join(out, "x.npy"), x)
    cases = [(F8E4M3FNUZ, s, None) for s in (1, 0)] + [(F8E5M2FNUZ, s, None) for s in (1, 0)]
    cases += [(F4E2M1, s, None) for s in (1, 0)]
    cases += [(F8E8M0, s, r) for s in (1, 0) for r in ("up", "down", "nearest")]
    nodes, outs = [], []
    for i, (to, sat, mode) in enumerate(cases):
        attrs = {"to": to, "saturate": sat}
        if mode:
            attrs["round_mode"] = mode
        nodes += [helper.make_node("Cast", ["x"], ["c%d" % i], **attrs), helper.make_node("Cast", ["c%d" % i], ["f%d" % i], to=FLOAT)]
        outs += [value("c%d" % i, to, len(x)), value("f%d" % i, FLOAT, len(x))]
    save_model(nodes, [value("x", FLOAT, len(x))], outs, os.path.join(out, "encode.onnx"))

    y = np.arange(-160, 161, dtype=np.float32) / 4
    np.save(os.path.join(out, "y.npy"), y)
    nodes, outs = [], []
    for i, to in enumerate((INT4, UINT4, INT2, UINT2)):
        nodes += [helper.make_node("Cast", ["y"], ["q%d" % i], to=to), helper.make_node("Cast", ["q%d" % i], ["g%d" % i], to=FLOAT)]
        outs += [value("q%d" % i, to, len(y)), value("g%d" % i, FLOAT, len(y))]
    save_model(nodes, [value("y", FLOAT, len(y))], outs, os.path.join(out, "ints.onnx"))

    nodes, ins, outs = [], [], []
    for i, dt in enumerate(BITS):
        n = 1 << BITS[dt]
        codes = packed("d%d" % i, list(range(n)), BITS[dt])
        codes.data_type = dt
        open(os.path.join(out, "d%d.pb" % i), "wb").write(codes.SerializeToString())
        nodes += [helper.make_node("Cast", ["d%d" % i], ["v%d" % i], to=FLOAT), helper.make_node("Identity", ["d%d" % i], ["p%d" % i])]
        ins.append(value("d%d" % i, dt, n))
        outs += [value("v%d" % i, FLOAT, n), value("p%d" % i, dt, n)]
    save_model(nodes, ins, outs, os.path.join(out, "decode.onnx"))
    print(len(cases), len(BITS))


if sys.argv[1] == "check":
    check(sys.argv[2], sys.argv[3])
else:
    main(sys.argv[1])
