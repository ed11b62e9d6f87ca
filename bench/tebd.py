#!/usr/bin/env python3
"""numpy's side of examples/tebd: the same real-time TEBD of the Néel state
of the open Heisenberg chain (symmetric sweeps of exp(-i h dt/2) gates,
each pair split by a truncated SVD with the orthogonality centre moved
along), timed over the evolution alone; prints the line examples/tebd
prints, without the exact comparison (infidelity=-).

Usage: OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/tebd.py [L chi dt t cutoff]
(defaults 10 32 0.01 4 1e-10, examples/tebd's).
"""

import sys
import time

import numpy as np

L, chi, dt, T, cutoff = 10, 32, 0.01, 4.0, 1e-10
if len(sys.argv) > 1:
    L, chi, dt, T, cutoff = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])

h = np.zeros((4, 4))
for s in range(4):
    if s in (0, 3):
        h[s, s] = 0.25
    else:
        h[s, s] = -0.25
        h[s, s ^ 3] = 0.5
w, v = np.linalg.eigh(h)
gate = (v * np.exp(-0.5j * dt * w)) @ v.T
gate = gate.reshape(2, 2, 2, 2)

m = []
for i in range(L):
    a = np.zeros((1, 2, 1), complex)
    a[0, i % 2, 0] = 1
    m.append(a)


def apply(i, rightward):
    theta = np.einsum("aib,bjc->aijc", m[i], m[i + 1])
    theta = np.einsum("ijkl,aklc->aijc", gate, theta)
    a, p, q, c = theta.shape
    u, s, vh = np.linalg.svd(theta.reshape(a * p, q * c), full_matrices=False)
    # keep the fewest values whose discarded weight is within cutoff·‖θ‖, at most chi
    tail = np.sqrt(np.cumsum((s**2)[::-1]))[::-1]  # tail[k] = ‖s[k:]‖
    keep = max(1, min(chi, int(np.count_nonzero(tail > cutoff * np.linalg.norm(s)))))
    lost = np.linalg.norm(s[keep:])
    u, s, vh = u[:, :keep], s[:keep], vh[:keep]
    if rightward:
        m[i] = u.reshape(a, p, keep)
        m[i + 1] = (s[:, None] * vh).reshape(keep, q, c)
    else:
        m[i] = (u * s).reshape(a, p, keep)
        m[i + 1] = vh.reshape(keep, q, c)
    return lost**2


steps = round(T / dt)
start = time.perf_counter()
lost = 0.0
for _ in range(steps):
    for i in range(L - 1):
        lost += apply(i, True)
    for i in range(L - 2, -1, -1):
        lost += apply(i, False)
seconds = time.perf_counter() - start
print("L=%d chi=%d dt=%g t=%g steps=%d seconds=%.3f max_bond=%d discarded=%.3g infidelity=-"
      % (L, chi, dt, T, steps, seconds, max(a.shape[2] for a in m), np.sqrt(lost)))
