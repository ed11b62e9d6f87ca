#!/usr/bin/env python3
"""numpy's side of cpu's BenchmarkLayouts: the two-operand contractions of
bench/einsum-layouts.json (the same list the benchmark reads), timed with
np.einsum(optimize=True) on uniform random operands; prints one line per
case, `dtype equation shapes median_ms`, medians of seven calls after one
untimed call.

Usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/einsum-layouts.py [float64|complex128]
"""

import json
import os
import sys
import timeit

import numpy as np

dtype = np.dtype(sys.argv[1] if len(sys.argv) > 1 else "float64")
cases = json.load(open(os.path.join(os.path.dirname(__file__), "einsum-layouts.json")))
rng = np.random.default_rng(1)
for eq, sa, sb in cases:
    x, y = rng.random(sa).astype(dtype), rng.random(sb).astype(dtype)
    f = lambda: np.einsum(eq, x, y, optimize=True)
    f()
    t = sorted(timeit.repeat(f, number=1, repeat=7))
    print(dtype, eq, sa, sb, "%.3f" % (t[3] * 1e3))
