#!/usr/bin/python3
"""Fits path.DefaultTimeModel to measured rates of the CPU engine's GEMM.

Input: the output of
    GOMAXPROCS=1 go test ./cpu -run '^$' -bench GEMMRate -benchtime 20x
(bmk,bkn->bmn in float64 on one thread, about 2^24 multiply-adds per
shape). The model (einsum/path/timemodel.go) predicts a step's time, in
multiply-adds at an asymptotic peak rate P, as
    b·m·n·k·min(Cap, (1 + Half/m)(1 + Half/n)) + Write·b·m·n
(k > 1; a step with k = 1 costs b·m·n·(1 + Write)).
Half, Write and P are fitted on the shapes with m, n, k >= 3 by least
squares on log time, reweighted towards the median error (the shared
machine's noise makes a few shapes 5-20 times off); Cap is then the value
that minimizes the median error over the batched dot products (m = n = 1).
Only ratios matter to Search, so P is reported, not used.

Usage: /usr/bin/python3 bench/timemodel-fit.py RATES.txt
"""
import re
import sys

import numpy as np


def load(path):
    rows = []
    for line in open(path):
        m = re.search(r"b(\d+)_m(\d+)_n(\d+)_k(\d+)\S*\s+\d+\s+(\d+) ns/op", line)
        if m:
            rows.append([float(x) for x in m.groups()])
    a = np.array(rows)
    return a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4] * 1e-9


def predict(p, b, m, n, k):
    peak, half, cap, write = np.exp(p)
    slow = np.where(k > 1, np.minimum((1 + half / m) * (1 + half / n), cap), 1.0)
    return (b * m * n * k * slow + write * b * m * n) / peak


def fit(b, m, n, k, t):
    best = None
    for h0 in (8, 32, 64):
        for w0 in (30, 100, 300):
            p = np.log([5e10, h0, 1e12, w0])
            weight = np.ones(len(t))
            for _ in range(5):
                for _ in range(60):
                    r = (np.log(predict(p, b, m, n, k)) - np.log(t)) * weight
                    jac = np.zeros((len(r), 4))
                    for i in (0, 1, 3):
                        d = np.zeros(4)
                        d[i] = 1e-5
                        jac[:, i] = ((np.log(predict(p + d, b, m, n, k)) - np.log(t)) * weight - r) / 1e-5
                    p = p + np.clip(np.linalg.lstsq(jac, -r, rcond=None)[0], -1, 1)
                r = np.log(predict(p, b, m, n, k)) - np.log(t)
                weight = 1 / np.sqrt(np.maximum(np.abs(r), 0.05))
            err = np.median(np.abs(r))
            if best is None or err < best[0]:
                best = (err, p)
    return best[1]


def main():
    b, m, n, k, t = load(sys.argv[1])
    big = (m >= 3) & (n >= 3) & (k >= 3)
    p = fit(b[big], m[big], n[big], k[big], t[big])
    dots = (m == 1) & (n == 1) & (k > 1)
    if dots.any():
        caps = np.exp(np.linspace(np.log(4), np.log(4000), 400))
        errs = []
        for c in caps:
            p[2] = np.log(c)
            errs.append(np.median(np.abs(np.log(predict(p, b[dots], m[dots], n[dots], k[dots])) - np.log(t[dots]))))
        p[2] = np.log(caps[int(np.argmin(errs))])
    peak, half, cap, write = np.exp(p)
    r = np.abs(np.log(predict(p, b, m, n, k)) - np.log(t))
    print("shapes %d (fit on %d with m, n, k >= 3, Cap on %d with m = n = 1)" % (len(t), big.sum(), dots.sum()))
    print("Half %.1f  Cap %.0f  Write %.1f  asymptotic peak %.0f GFLOP/s" % (half, cap, write, 2 * peak / 1e9))
    for name, sel in (("m, n, k >= 3", big), ("all", np.ones(len(t), bool))):
        print("error over %s: median %.2fx, 90th percentile %.2fx, max %.1fx" % (
            name, np.exp(np.median(r[sel])), np.exp(np.percentile(r[sel], 90)), np.exp(r[sel].max())))


if __name__ == "__main__":
    main()
