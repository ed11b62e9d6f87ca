#!/usr/bin/env python3
"""numpy's side of linalg's BenchmarkSmall: QR (np.linalg.qr, reduced) and
thin SVD (np.linalg.svd, full_matrices=False) of the same small shapes in
float64, complex128, float32 and complex64, and np.linalg.eigh of Hermitian matrices of 8 to 128
rows; prints one line per case, named as the Go benchmark names it, with the
median µs of seven repeats of a loop of calls.

Usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/linalg-small.py
"""

import timeit

import numpy as np

shapes = [(8, 4), (8, 8), (16, 8), (16, 16), (32, 16), (32, 32), (64, 32), (64, 64), (128, 64), (256, 8), (1024, 8)]
rng = np.random.default_rng(1)


def median_us(f):
    f()
    number = max(1, int(0.02 / max(timeit.timeit(f, number=1), 1e-7)))
    ts = sorted(timeit.repeat(f, number=number, repeat=7))
    return ts[3] / number * 1e6


for dt in ("float64", "complex128", "float32", "complex64"):
    prefix = "" if dt == "float64" else dt + "/"
    for m, n in shapes:
        a = rng.standard_normal((m, n))
        if dt.startswith("complex"):
            a = a + 1j * rng.standard_normal((m, n))
        a = a.astype(dt)
        print("QR/%s%dx%d %.1f" % (prefix, m, n, median_us(lambda: np.linalg.qr(a))))
        print("SVD/%s%dx%d %.1f" % (prefix, m, n, median_us(lambda: np.linalg.svd(a, full_matrices=False))))
    for n in (8, 16, 32, 64, 128):
        a = rng.standard_normal((n, n))
        if dt.startswith("complex"):
            a = a + 1j * rng.standard_normal((n, n))
        h = ((a + a.conj().T) / 2).astype(dt)
        print("Eigh/%s/%d %.1f" % (dt, n, median_us(lambda: np.linalg.eigh(h))))
