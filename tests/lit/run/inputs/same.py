#!/usr/bin/python3
"""same.py A.npy B.npy [A.npy B.npy]... - exits 0 when every pair holds the
same dtype, shape and values, bit for bit (the .npy headers may differ)."""
import sys

import numpy as np

ok = True
for a_path, b_path in zip(sys.argv[1::2], sys.argv[2::2]):
    a, b = np.load(a_path), np.load(b_path)
    same = a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if not same:
        print("%s and %s differ" % (a_path, b_path))
    ok &= same
sys.exit(0 if ok else 1)
