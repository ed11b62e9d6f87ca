#!/usr/bin/env python3
"""numpy's side of cpu's BenchmarkContractSmall: the small contractions of
bench/einsum-small.json (the list the benchmark reads), timed with
np.einsum on uniform random float64 operands, without and with
optimize=True; prints one line per case and mode, `equation optimize
median_us`, medians of seven runs of 200 calls after one untimed call.

Usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/einsum-small.py
"""

import json
import os
import timeit

import numpy as np

cases = json.load(open(os.path.join(os.path.dirname(__file__), "einsum-small.json")))
rng = np.random.default_rng(1)
for eq, shapes in cases:
    ops = [rng.random(s) for s in shapes]
    for opt in (False, True):
        f = lambda: np.einsum(eq, *ops, optimize=opt)
        f()
        t = sorted(timeit.repeat(f, number=200, repeat=7))
        print(eq, "optimize=%s" % opt, "%.2f" % (t[3] / 200 * 1e6))
