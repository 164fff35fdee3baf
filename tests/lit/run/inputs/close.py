#!/usr/bin/python3
"""close.py GOT.npy WANT.npy [GOT.npy WANT.npy]... - exits 0 when every pair
has one shape and agrees to rtol 1e-4, atol 1e-5 (float32 sums in another
order); prints the largest difference of each pair."""
import sys

import numpy as np

ok = True
for got, want in zip(sys.argv[1::2], sys.argv[2::2]):
    a, b = np.load(got), np.load(want)
    same = a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-5)
    print("%s: %s" % (got, ("max diff %g" % np.max(np.abs(a - b))) if a.shape == b.shape else "shape %s, want %s" % (a.shape, b.shape)))
    ok &= same
sys.exit(0 if ok else 1)
