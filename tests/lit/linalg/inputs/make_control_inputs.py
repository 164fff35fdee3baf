#!/usr/bin/python3
"""Writes the inputs of the Linalg control-flow test (control.test): small
ONNX models with If, Loop and Scan, and .npy inputs; prints the expected
results, computed with numpy, that control.test checks. Run from
tests/lit/linalg/inputs with Debian's python3-onnx:
    /usr/bin/python3 make_control_inputs.py
"""
import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

from lit_models import V, init, model, npy

F, I, B = T.FLOAT, T.INT64, T.BOOL


def show(what, a):
    print(what, a.dtype, list(a.shape), " ".join(f"{v:g}" for v in a.ravel()))


# If: a runtime condition; the branches yield [3] and [4] (result [?]); the
# else branch reads the outer value w.
then_g = h.make_graph([h.make_node("Add", ["x", "x"], ["t"])], "then", [], [V("t", F, [3])])
else_g = h.make_graph([h.make_node("Concat", ["x", "w"], ["e"], axis=0)], "else", [], [V("e", F, [4])])
model("ctl_if", [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
      [V("c", B, []), V("x", F, [3])], [V("y", F, None)], [init("w", np.array([7], np.float32))])
x3 = np.array([1, 2, 3], np.float32)
npy("ctl_x3", x3)
npy("ctl_true", np.array(True))
npy("ctl_false", np.array(False))
show("IF true:", x3 + x3)
show("IF false:", np.concatenate([x3, [7]]).astype(np.float32))

# Loop with M and a condition the body computes: x += w * i while sum(x) < 20;
# scan output: each iteration's x. Runs fewer than M times.
body = h.make_graph(
    [h.make_node("Cast", ["i"], ["fi"], to=F),
     h.make_node("Mul", ["w", "fi"], ["d"]),
     h.make_node("Add", ["x", "d"], ["x2"]),
     h.make_node("ReduceSum", ["x2"], ["s"], keepdims=0),
     h.make_node("Less", ["s", "lim"], ["c2"]),
     h.make_node("Identity", ["x2"], ["scan"])],
    "body", [V("i", I, []), V("c", B, []), V("x", F, [2])],
    [V("c2", B, []), V("x2", F, [2]), V("scan", F, [2])])
model("ctl_loop", [h.make_node("Loop", ["m", "cond", "x0"], ["xf", "xs"], body=body)],
      [V("m", I, []), V("cond", B, []), V("x0", F, [2])], [V("xf", F, None), V("xs", F, None)],
      [init("w", np.array([1, 2], np.float32)), init("lim", np.array(20, np.float32))])
x0 = np.array([0.5, 1], np.float32)
npy("ctl_x0", x0)
npy("ctl_m10", np.array(10, np.int64))
x, xs = x0.copy(), []
for i in range(10):
    x = x + np.array([1, 2], np.float32) * i
    xs.append(x)
    if not x.sum() < 20:
        break
show("LOOP final:", x)
show("LOOP scan:", np.stack(xs))

# Loop with M only (no condition): a for loop; the scan output is sized by M.
body = h.make_graph(
    [h.make_node("Mul", ["x", "two"], ["x2"]), h.make_node("Identity", ["c"], ["c2"]),
     h.make_node("Cast", ["i"], ["scan"], to=F)],
    "body", [V("i", I, []), V("c", B, []), V("x", F, [2])],
    [V("c2", B, []), V("x2", F, [2]), V("scan", F, [])])
model("ctl_for", [h.make_node("Loop", ["m", "", "x0"], ["xf", "is"], body=body)],
      [V("m", I, []), V("x0", F, [2])], [V("xf", F, None), V("is", F, None)],
      [init("two", np.array(2, np.float32))])
npy("ctl_m3", np.array(3, np.int64))
show("FOR final:", x0 * 8)
show("FOR scan:", np.arange(3, dtype=np.float32))

# An If inside a Loop body: reads the iteration number and the outer w.
then_g = h.make_graph([h.make_node("Add", ["x", "w"], ["t"])], "then", [], [V("t", F, [2])])
else_g = h.make_graph([h.make_node("Mul", ["x", "two"], ["e"])], "else", [], [V("e", F, [2])])
body = h.make_graph(
    [h.make_node("Equal", ["i", "one"], ["q"]),
     h.make_node("If", ["q"], ["x2"], then_branch=then_g, else_branch=else_g),
     h.make_node("Identity", ["c"], ["c2"])],
    "body", [V("i", I, []), V("c", B, []), V("x", F, [2])], [V("c2", B, []), V("x2", F, [2])])
model("ctl_nested", [h.make_node("Loop", ["m", "", "x0"], ["xf"], body=body)],
      [V("x0", F, [2])], [V("xf", F, None)],
      [init("two", np.array(2, np.float32)), init("w", np.array([10, 20], np.float32)),
       init("one", np.array(1, np.int64)), init("m", np.array(3, np.int64))])
x = x0.copy()
for i in range(3):
    x = x + np.array([10, 20], np.float32) if i == 1 else x * 2
show("NESTED:", x)

# Scan over axis 1, reversed, stacking its output along axis 1, reversed.
body = h.make_graph(
    [h.make_node("Add", ["s", "x"], ["s2"]), h.make_node("Mul", ["s2", "x"], ["y"])],
    "body", [V("s", F, [2]), V("x", F, [2])], [V("s2", F, [2]), V("y", F, [2])])
model("ctl_scan", [h.make_node("Scan", ["s0", "xs"], ["sf", "ys"], body=body, num_scan_inputs=1,
                               scan_input_axes=[1], scan_input_directions=[1],
                               scan_output_axes=[1], scan_output_directions=[1])],
      [V("s0", F, [2]), V("xs", F, [2, "N"])], [V("sf", F, None), V("ys", F, None)])
s0 = np.array([1, -1], np.float32)
xs23 = np.arange(6, dtype=np.float32).reshape(2, 3)
npy("ctl_s0", s0)
npy("ctl_xs23", xs23)
s, ys = s0.copy(), np.zeros((2, 3), np.float32)
for t in range(3):
    x = xs23[:, 2 - t]
    s = s + x
    ys[:, 2 - t] = s * x
show("SCAN final:", s)
show("SCAN ys:", ys)
