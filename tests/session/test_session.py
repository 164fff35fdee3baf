#!/usr/bin/env python3
"""test_session.py BUILD MODELS_DIR - onnx2mlir.InferenceSession from Python,
on the build tree's library (ONNX2MLIR_LIBRARY) and the module's sources.

MODELS_DIR holds make_session_models.py's models, decoder.onnx (make_decoder.py)
and run/ (the files `onnx2mlir run -o` wrote for the example). Checks:
  example     the bundled CNN's outputs equal `onnx2mlir run`'s files
  whole models the bench models (make_run_models.py) and the contrib suite's
              whole models: outputs equal `onnx2mlir run`'s files
  sizes       batches 1, 3, 5, 2 through one session: each equals the
              one-shot Model.run; two compiles in all
  scalar      a 0-d int64 input (as a VAD model's sample rate) runs
  errors      wrong name, dtype, rank, size, a missing input, an unknown
              output, a closed session: onnx2mlir.Error naming the input
  unsupported creation lists every node the target cannot lower
  threads     4 Python threads x 25 calls share one session: every output
              equals the one-thread output
  bytes       a session from the model's bytes
  decoder     greedy generation (8 prompt tokens, 32 new, the KV cache fed
              back) gives NumPy's tokens and onnxruntime's recorded ones,
              with two compiles on linalg; on tosa (4 tokens) the prefill's
              empty past runs, and each size compiles (TOSA needs static sizes)
Prints "PASS name" / "FAIL name: why", then "session python: N passed, M failed".
"""
import os
import sys
import threading
import traceback

import numpy as np

build, models = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", ".."))
sys.path.insert(0, here)
import onnx2mlir  # noqa: E402  (PYTHONPATH set by run_session_tests.sh)
import make_decoder  # noqa: E402

from onnx import TensorProto, numpy_helper  # noqa: E402

cnn = os.path.join(root, "examples", "small_cnn.onnx")
results = {"passed": 0, "failed": 0}


def check(name, fn):
    try:
        fn()
        print("PASS", name)
        results["passed"] += 1
    except Exception:  # a failed check, whatever raised it
        print("FAIL %s: %s" % (name, traceback.format_exc().strip().splitlines()[-1]))
        traceback.print_exc(file=sys.stdout)
        results["failed"] += 1


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def images(batch):
    i = np.arange(784 * batch)
    return (((i * 7919) % 255) / 255.0 - 0.25 * (i % 3)).astype(np.float32).reshape(batch, 1, 28, 28)


def expect_error(fn, *needles):
    try:
        fn()
    except onnx2mlir.Error as e:
        for n in needles:
            assert n in str(e), "the message %r does not name %r" % (str(e), n)
        return
    raise AssertionError("no onnx2mlir.Error (wanted one naming %s)" % ", ".join(needles))


def example():
    s = onnx2mlir.InferenceSession(cnn, cache=False)
    ins, outs = s.get_inputs(), s.get_outputs()
    assert [a.name for a in ins] == ["image"] and ins[0].shape == ["batch", 1, 28, 28], ins
    assert ins[0].type == "tensor(float)" and outs[0].name == "probs", outs
    x = read_pb(os.path.join(root, "examples", "small_cnn_inputs", "input_0.pb"))
    want = read_pb(os.path.join(models, "run", "output_0.pb"))
    [got] = s.run(None, {"image": x})
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)  # the same code as `run`'s: the same bits
    [named] = s.run(["probs"], {"image": x})
    np.testing.assert_array_equal(named, want)


def whole_models():
    """The bench models and the contrib suite's whole models: each output
    equals the file `onnx2mlir run` wrote (the same code: the same bits)."""
    cases = [(os.path.join(models, "bench", m + ".onnx"), [np.load(os.path.join(models, "bench", m + "_x.npy"))],
              os.path.join(models, "run_" + m)) for m in ("resnet_small", "encoder_small")]
    contrib = os.path.join(root, "tests", "contrib")
    for m in sorted(d for d in os.listdir(contrib) if d.startswith("model_")):
        data = os.path.join(contrib, m, "test_data_set_0")
        n = len([f for f in os.listdir(data) if f.startswith("input_")])
        cases.append((os.path.join(contrib, m, "model.onnx"),
                      [read_pb(os.path.join(data, "input_%d.pb" % i)) for i in range(n)], os.path.join(models, "run_" + m)))
    for path, inputs, run_dir in cases:
        s = onnx2mlir.InferenceSession(path, cache=False)
        outs = s.run(None, {a.name: x for a, x in zip(s.get_inputs(), inputs)})
        for i, got in enumerate(outs):
            want = read_pb(os.path.join(run_dir, "output_%d.pb" % i))
            assert got.dtype == want.dtype and got.shape == want.shape, (path, i, got.shape, want.shape)
            assert np.array_equal(got, want), "%s output %d differs from run's" % (path, i)


def sizes():
    s = onnx2mlir.InferenceSession(cnn, cache=False)
    model = onnx2mlir.load(cnn)
    for batch in (1, 3, 5, 2):
        [got] = s.run(None, {"image": images(batch)})
        want = model.run({"image": images(batch)})["probs"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    st = s.stats()
    assert st["compiles"] == 2 and st["calls"] == 4 and st["generic"] == 1, st


def scalar():
    s = onnx2mlir.InferenceSession(os.path.join(models, "scalar.onnx"), cache=False)
    assert s.get_inputs()[1].shape == [], s.get_inputs()
    x = np.arange(5, dtype=np.float32)
    [y] = s.run(None, {"x": x, "sr": np.array(16000, dtype=np.int64)})
    np.testing.assert_array_equal(y, x * 16000)
    [y] = s.run(None, {"x": x[:3], "sr": 8000})  # a Python int becomes a 0-d int64
    np.testing.assert_array_equal(y, x[:3] * 8000)
    m = onnx2mlir.load(os.path.join(models, "scalar.onnx"))
    np.testing.assert_array_equal(m.run({"x": x, "sr": np.int64(3)})["y"], x * 3)


def errors():
    s = onnx2mlir.InferenceSession(cnn, cache=False)
    good = images(1)
    expect_error(lambda: s.run(None, {"pixels": good}), "no input 'pixels'", "image")
    expect_error(lambda: s.run(None, {}), "'image' is missing")
    expect_error(lambda: s.run(None, {"image": good.astype(np.float64)}), "'image'", "float[batch,1,28,28]", "double")
    expect_error(lambda: s.run(None, {"image": good[0]}), "'image'", "rank 3")
    expect_error(lambda: s.run(None, {"image": np.zeros((1, 1, 28, 27), np.float32)}), "'image'", "dim 3 is 27")
    expect_error(lambda: s.run(["nope"], {"image": good}), "no output 'nope'")
    expect_error(lambda: s.run(None, [good]), "takes a dict")
    [ok] = s.run(None, {"image": good})  # still fine after the bad calls
    assert ok.shape == (1, 10)
    s.close()
    expect_error(lambda: s.run(None, {"image": good}), "closed")
    expect_error(lambda: onnx2mlir.InferenceSession(os.path.join(models, "missing.onnx")), "missing.onnx")


def unsupported():
    expect_error(lambda: onnx2mlir.InferenceSession(os.path.join(models, "unsupported.onnx"), cache=False),
                 "first_unknown", "second_unknown")


def threads():
    s = onnx2mlir.InferenceSession(cnn, cache=False)
    expected = {b: s.run(None, {"image": images(b)})[0] for b in (1, 2, 3, 4)}
    bad = []

    def work(seed):
        for i in range(25):
            b = 1 + (seed * 31 + i * 17) % 4
            [y] = s.run(None, {"image": images(b)})
            if not np.array_equal(y, expected[b]):
                bad.append("thread %d call %d (batch %d)" % (seed, i, b))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad, bad[:3]
    assert s.stats()["compiles"] == 2, s.stats()


def from_bytes():
    with open(cnn, "rb") as f:
        s = onnx2mlir.InferenceSession(f.read())
    [y] = s.run(None, {"image": images(2)})
    np.testing.assert_allclose(y, onnx2mlir.load(cnn).run({"image": images(2)})["probs"], rtol=1e-5, atol=1e-7)


def decoder(target, n_new=32):
    path = os.path.join(models, "decoder.onnx")
    c = make_decoder.Config()
    p = make_decoder.weights(c)
    want = make_decoder.generate(lambda i, q, past: make_decoder.forward(c, p, i, q, past), c, n_new=n_new)
    with open(os.path.join(here, "decoder_tokens_ort.txt")) as f:
        ort = [int(t) for t in f.read().split()][:n_new]
    assert want == ort, "NumPy's tokens %s differ from onnxruntime's recorded %s" % (want, ort)
    s = onnx2mlir.InferenceSession(path, target=target, cache=False)

    def step(ids, pos, past):
        feeds = {"input_ids": ids, "position_ids": pos}
        for l, (k, v) in enumerate(past):
            feeds["past_key_%d" % l], feeds["past_value_%d" % l] = k, v
        out = s.run(None, feeds)
        ref, _ = make_decoder.forward(c, p, ids, pos, past)
        np.testing.assert_allclose(out[0], ref, rtol=1e-3, atol=1e-4)
        return out[0], [(out[1 + 2 * l], out[2 + 2 * l]) for l in range(c.layers)]

    got = make_decoder.generate(step, c, n_new=n_new)
    assert got == want, "tokens %s, NumPy's %s" % (got, want)
    st = s.stats()
    if target == "linalg":  # compiled twice: the prefill's sizes, then every size
        assert st["compiles"] == 2 and st["calls"] == n_new and st["generic_refused"] is None, st
    else:  # TOSA's lowering needs static sizes: a variant per size, and says why
        assert st["compiles"] == n_new and "static" in st["generic_refused"], st


check("example", example)
check("whole models", whole_models)
check("sizes", sizes)
check("scalar", scalar)
check("errors", errors)
check("unsupported", unsupported)
check("threads", threads)
check("bytes", from_bytes)
check("decoder linalg", lambda: decoder("linalg"))
check("decoder tosa", lambda: decoder("tosa", n_new=4))  # the prefill with an empty past, 3 steps
print("session python: %d passed, %d failed" % (results["passed"], results["failed"]))
sys.exit(1 if results["failed"] else 0)
