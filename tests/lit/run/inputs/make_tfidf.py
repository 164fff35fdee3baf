#!/usr/bin/python3
"""make_tfidf.py OUT - tfidf.test's TfIdfVectorizer models on int64 rows
[3, 14] of small values: unigrams to trigrams with skips up to 2, in each
mode (TF, IDF and TFIDF with weights, IDF without), two n-grams sharing an
output coordinate, and a 1-D int32 input with min_gram_length 2 (the
unigrams of the pool are then not counted). NumPy's results from a direct
walk of the operator's definition (every start, every skip, a unigram once)
in expected_<k>.npy."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
rng = np.random.default_rng(9)
pool = [1, 2, 3, 4,  1, 2, 2, 3, 4, 4,  1, 2, 3, 2, 2, 2]  # unigrams, bigrams, trigrams
counts = [0, 4, 10]
indexes = [0, 1, 2, 3, 4, 5, 6, 2, 7]  # bigram (2, 3) shares coordinate 2 with unigram 3
weights = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 2.5, 1.25]


def reference(x, mn, mx, skip, mode, w):
    grams, g = {}, 0
    for n in range(1, len(counts) + 1):
        end = counts[n] if n < len(counts) else len(pool)
        for p in range(counts[n - 1], end, n):
            grams[tuple(pool[p:p + n])] = g
            g += 1
    rows = x.reshape(-1, x.shape[-1])
    c = np.zeros((rows.shape[0], g))
    for r, row in enumerate(rows):
        for n in range(mn, mx + 1):
            for s in range(skip + 1 if n > 1 else 1):
                d = s + 1
                for i in range(len(row) - (n - 1) * d):
                    t = tuple(int(row[i + k * d]) for k in range(n))
                    if t in grams:
                        c[r, grams[t]] += 1
    wv = np.array(w if w else [1.0] * g)
    v = c if mode == "TF" else (c > 0) * wv if mode == "IDF" else c * wv
    y = np.zeros((rows.shape[0], max(indexes) + 1))
    for k in range(g):
        y[:, indexes[k]] += v[:, k]
    return y.reshape(max(indexes) + 1) if x.ndim == 1 else y


cases = [("TF", 1, 3, 2, None), ("IDF", 1, 3, 1, weights), ("TFIDF", 1, 2, 2, weights), ("IDF", 1, 3, 0, None),
         ("TF", 2, 3, 1, None)]
x2 = rng.integers(0, 6, (3, 14)).astype(np.int64)
x1 = np.array([1, 2, 3, 4, 4, 2, 2, 2, 1, 5, 2, 3, 0, 4], np.int32)  # its n-grams in the pool
nodes, outputs = [], []
for k, (mode, mn, mx, skip, w) in enumerate(cases):
    src = "x1" if k == len(cases) - 1 else "x2"
    attrs = dict(mode=mode, min_gram_length=mn, max_gram_length=mx, max_skip_count=skip, ngram_counts=counts,
                 ngram_indexes=indexes, pool_int64s=pool)
    if w:
        attrs["weights"] = w
    nodes.append(helper.make_node("TfIdfVectorizer", [src], [f"y{k}"], **attrs))
    outputs.append(helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, None))
    np.save(os.path.join(out, f"expected_{k}.npy"),
            reference(x1 if src == "x1" else x2, mn, mx, skip, mode, w).astype(np.float32))
graph = helper.make_graph(nodes, "tfidf", [helper.make_tensor_value_info("x2", TensorProto.INT64, [3, 14]),
                                           helper.make_tensor_value_info("x1", TensorProto.INT32, [14])], outputs)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "tfidf.onnx"))
np.save(os.path.join(out, "x2.npy"), x2)
np.save(os.path.join(out, "x1.npy"), x1)
print(len(cases))
