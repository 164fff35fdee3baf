#!/usr/bin/env python3
"""make_decoder.py OUT.onnx [--layers N --hidden H ...] - a small Llama-style
decoder with a KV cache, as PyTorch exports such models: token embedding,
RMSNorm, rotary positions (rotate-half form, cos/sin from position_ids),
grouped-query attention (fewer key/value heads than query heads, each
repeated), a causal mask over past + new positions built with Range, SwiGLU
MLP, a final RMSNorm and the LM head. Inputs: input_ids int64[batch, seq],
position_ids int64[batch, seq], past_key_<l> / past_value_<l>
float[batch, kv_heads, past, head_dim] (past may be 0: prefill starts with
an empty cache). Outputs: logits float[batch, seq, vocab], present_key_<l> /
present_value_<l> (the past with the new positions appended).

Weights are drawn from NumPy's RandomState(seed), so the model is the same
on every machine. `forward` below computes the same decoder in NumPy (the
test's oracle) and `generate` runs greedy generation with it.
Debian's python3-onnx and python3-numpy only.
"""
import argparse

import numpy as np


class Config:
    def __init__(self, vocab=96, hidden=64, heads=4, kv_heads=2, layers=2, ffn=160, seed=7):
        self.vocab, self.hidden, self.heads, self.kv_heads = vocab, hidden, heads, kv_heads
        self.layers, self.ffn, self.seed = layers, ffn, seed
        self.head_dim = hidden // heads
        self.eps = 1e-5


def weights(c):
    rng = np.random.RandomState(c.seed)

    def w(*shape, scale=None):
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    p = {"embed": w(c.vocab, c.hidden, scale=1.0), "final_norm": (1 + 0.1 * rng.standard_normal(c.hidden)).astype(np.float32),
         "lm_head": w(c.hidden, c.vocab)}
    kv = c.kv_heads * c.head_dim
    for l in range(c.layers):
        p["l%d.attn_norm" % l] = (1 + 0.1 * rng.standard_normal(c.hidden)).astype(np.float32)
        p["l%d.wq" % l] = w(c.hidden, c.hidden)
        p["l%d.wk" % l] = w(c.hidden, kv)
        p["l%d.wv" % l] = w(c.hidden, kv)
        p["l%d.wo" % l] = w(c.hidden, c.hidden)
        p["l%d.mlp_norm" % l] = (1 + 0.1 * rng.standard_normal(c.hidden)).astype(np.float32)
        p["l%d.w_gate" % l] = w(c.hidden, c.ffn)
        p["l%d.w_up" % l] = w(c.hidden, c.ffn)
        p["l%d.w_down" % l] = w(c.ffn, c.hidden)
    p["inv_freq"] = (1.0 / (10000.0 ** (np.arange(0, c.head_dim, 2, dtype=np.float32) / c.head_dim))).astype(np.float32)
    return p


# ---- the NumPy oracle -------------------------------------------------------

def _rms(x, g, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * g


def _rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def forward(c, p, ids, pos, past):
    """ids, pos: [b, s]; past: list of (k, v) [b, kvh, P, hd]. Returns
    logits [b, s, vocab] and the presents."""
    b, s = ids.shape
    x = p["embed"][ids]
    freqs = pos[..., None].astype(np.float32) * p["inv_freq"]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb)[:, None], np.sin(emb)[:, None]  # [b, 1, s, hd]
    presents = []
    for l in range(c.layers):
        h = _rms(x, p["l%d.attn_norm" % l], c.eps)
        q = (h @ p["l%d.wq" % l]).reshape(b, s, c.heads, c.head_dim).transpose(0, 2, 1, 3)
        k = (h @ p["l%d.wk" % l]).reshape(b, s, c.kv_heads, c.head_dim).transpose(0, 2, 1, 3)
        v = (h @ p["l%d.wv" % l]).reshape(b, s, c.kv_heads, c.head_dim).transpose(0, 2, 1, 3)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        k = np.concatenate([past[l][0], k], axis=2)
        v = np.concatenate([past[l][1], v], axis=2)
        presents.append((k, v))
        rep = c.heads // c.kv_heads
        kr = np.repeat(k, rep, axis=1)
        vr = np.repeat(v, rep, axis=1)
        total = k.shape[2]
        scores = q @ kr.transpose(0, 1, 3, 2) / np.sqrt(c.head_dim)
        allowed = np.arange(total)[None, None, None, :] <= pos[:, None, :, None]
        scores = np.where(allowed, scores, np.float32(-1e9))
        scores = scores - scores.max(-1, keepdims=True)
        e = np.exp(scores)
        a = (e / e.sum(-1, keepdims=True)) @ vr
        x = x + a.transpose(0, 2, 1, 3).reshape(b, s, c.hidden) @ p["l%d.wo" % l]
        h = _rms(x, p["l%d.mlp_norm" % l], c.eps)
        g = h @ p["l%d.w_gate" % l]
        x = x + ((g / (1 + np.exp(-g))) * (h @ p["l%d.w_up" % l])) @ p["l%d.w_down" % l]
    logits = _rms(x, p["final_norm"], c.eps) @ p["lm_head"]
    return logits.astype(np.float32), presents


def empty_past(c, batch=1):
    z = np.zeros((batch, c.kv_heads, 0, c.head_dim), np.float32)
    return [(z, z) for _ in range(c.layers)]


def prompt(c, n=8):
    return (np.arange(n, dtype=np.int64) * 37 + 5)[None] % c.vocab


def generate(step, c, n_prompt=8, n_new=32):
    """Greedy generation: `step(ids, pos, past) -> (logits, presents)`;
    the prefill, then one token a step. Returns the new tokens."""
    ids = prompt(c, n_prompt)
    pos = np.arange(n_prompt, dtype=np.int64)[None]
    past = empty_past(c)
    tokens = []
    for _ in range(n_new):
        logits, past = step(ids, pos, past)
        nxt = int(np.argmax(logits[0, -1]))
        tokens.append(nxt)
        p = int(pos[0, -1]) + 1
        ids = np.array([[nxt]], np.int64)
        pos = np.array([[p]], np.int64)
    return tokens


# ---- the ONNX model -----------------------------------------------------------

def build(c, p):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    count = [0]

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op, inputs, n_out=1, **attrs):
        count[0] += 1
        outs = ["%s_%d_%d" % (op.lower(), count[0], i) for i in range(n_out)]
        nodes.append(helper.make_node(op, inputs, outs, name="%s_%d" % (op, count[0]), **attrs))
        return outs[0] if n_out == 1 else outs

    for name, value in p.items():
        const(name, value)
    const("eps", np.array(c.eps, np.float32))
    const("neg_big", np.array(-1e9, np.float32))
    const("scale", np.array(1.0 / np.sqrt(c.head_dim), np.float32))
    const("axis_last", np.array([-1], np.int64))
    const("shape_q", np.array([0, 0, c.heads, c.head_dim], np.int64))
    const("shape_kv", np.array([0, 0, c.kv_heads, c.head_dim], np.int64))
    const("shape_rep", np.array([0, c.heads, -1, c.head_dim], np.int64))
    const("shape_out", np.array([0, 0, c.hidden], np.int64))
    const("half_lo", np.array([0], np.int64))
    const("half_mid", np.array([c.head_dim // 2], np.int64))
    const("half_hi", np.array([c.head_dim], np.int64))
    const("ax3", np.array([3], np.int64))
    const("ax2", np.array([2], np.int64))
    const("zero_i", np.array(0, np.int64))
    const("one_i", np.array(1, np.int64))

    def rms(x, g):
        sq = node("Mul", [x, x])
        mean = node("ReduceMean", [sq], axes=[-1], keepdims=1)
        den = node("Sqrt", [node("Add", [mean, "eps"])])
        return node("Mul", [node("Div", [x, den]), g])

    def rotate(x, cos, sin):
        lo = node("Slice", [x, "half_lo", "half_mid", "ax3"])
        hi = node("Slice", [x, "half_mid", "half_hi", "ax3"])
        rot = node("Concat", [node("Neg", [hi]), lo], axis=-1)
        return node("Add", [node("Mul", [x, cos]), node("Mul", [rot, sin])])

    x = node("Gather", ["embed", "input_ids"], axis=0)
    posf = node("Cast", ["position_ids"], to=TensorProto.FLOAT)
    freqs = node("Mul", [node("Unsqueeze", [posf, "axis_last"]), "inv_freq"])
    emb = node("Concat", [freqs, freqs], axis=-1)
    one_ax = const("ax1", np.array([1], np.int64))
    cos = node("Unsqueeze", [node("Cos", [emb]), one_ax])
    sin = node("Unsqueeze", [node("Sin", [emb]), one_ax])
    # causal mask: key position j allowed where j <= the query's position
    pos_q = node("Unsqueeze", [node("Unsqueeze", ["position_ids", one_ax]), "axis_last"])  # [b,1,s,1]
    outputs = []
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "seq"])]
    for l in range(c.layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info("past_%s_%d" % (kind, l), TensorProto.FLOAT,
                                                        ["batch", c.kv_heads, "past", c.head_dim]))
        h = rms(x, "l%d.attn_norm" % l)
        q = node("Transpose", [node("Reshape", [node("MatMul", [h, "l%d.wq" % l]), "shape_q"])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [node("MatMul", [h, "l%d.wk" % l]), "shape_kv"])], perm=[0, 2, 1, 3])
        v = node("Transpose", [node("Reshape", [node("MatMul", [h, "l%d.wv" % l]), "shape_kv"])], perm=[0, 2, 1, 3])
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        k = node("Concat", ["past_key_%d" % l, k], axis=2)
        v = node("Concat", ["past_value_%d" % l, v], axis=2)
        nodes.append(helper.make_node("Identity", [k], ["present_key_%d" % l]))
        nodes.append(helper.make_node("Identity", [v], ["present_value_%d" % l]))
        for kind in ("key", "value"):
            outputs.append(helper.make_tensor_value_info("present_%s_%d" % (kind, l), TensorProto.FLOAT,
                                                         ["batch", c.kv_heads, "total", c.head_dim]))
        rep = c.heads // c.kv_heads
        ku, vu = node("Unsqueeze", [k, "ax2"]), node("Unsqueeze", [v, "ax2"])
        kr = node("Reshape", [node("Concat", [ku] * rep, axis=2), "shape_rep"])
        vr = node("Reshape", [node("Concat", [vu] * rep, axis=2), "shape_rep"])
        scores = node("Mul", [node("MatMul", [q, node("Transpose", [kr], perm=[0, 1, 3, 2])]), "scale"])
        total = node("Gather", [node("Shape", [k]), "ax2"], axis=0)  # [1]
        key_pos = node("Range", ["zero_i", node("Squeeze", [total]), "one_i"])  # [total]
        allowed = node("LessOrEqual", [key_pos, pos_q])  # [b,1,s,total]
        scores = node("Where", [allowed, scores, "neg_big"])
        a = node("MatMul", [node("Softmax", [scores], axis=-1), vr])
        a = node("Reshape", [node("Transpose", [a], perm=[0, 2, 1, 3]), "shape_out"])
        x = node("Add", [x, node("MatMul", [a, "l%d.wo" % l])])
        h = rms(x, "l%d.mlp_norm" % l)
        g = node("MatMul", [h, "l%d.w_gate" % l])
        silu = node("Mul", [g, node("Sigmoid", [g])])
        x = node("Add", [x, node("MatMul", [node("Mul", [silu, node("MatMul", [h, "l%d.w_up" % l])]),
                                            "l%d.w_down" % l])])
    logits = node("MatMul", [rms(x, "final_norm"), "lm_head"])
    nodes.append(helper.make_node("Identity", [logits], ["logits"]))
    outputs.insert(0, helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", c.vocab]))
    graph = helper.make_graph(nodes, "decoder", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_decoder.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--ffn", type=int, default=160)
    ap.add_argument("--vocab", type=int, default=96)
    ap.add_argument("--tokens", help="also write NumPy's greedy tokens (8 prompt, 32 new) to this file")
    a = ap.parse_args()
    c = Config(a.vocab, a.hidden, a.heads, a.kv_heads, a.layers, a.ffn)
    p = weights(c)
    import onnx
    onnx.save(build(c, p), a.out)
    if a.tokens:
        with open(a.tokens, "w") as f:
            f.write(" ".join(map(str, generate(lambda i, q, past: forward(c, p, i, q, past), c))) + "\n")


if __name__ == "__main__":
    main()
