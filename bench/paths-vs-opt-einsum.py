#!/usr/bin/env python3
"""Reference paths for `goferro bench paths`: opt_einsum's greedy and random-greedy.

Reads the suite's networks (`goferro bench paths -networks nets.json`), runs
opt_einsum's optimizers on each, costs every path with opt_einsum's own
contract_path (exact integer FLOPs, so nothing overflows), times each in CPU
seconds (the process's, so a loaded machine does not inflate it), and writes the JSON
that `goferro bench paths -ref` adds as columns.

Usage:
    /usr/bin/python3 bench/paths-vs-opt-einsum.py nets.json refs.json [--repeats 32]

opt_einsum must be importable (PYTHONPATH pointing at a checkout of its source
works: it is pure Python).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import opt_einsum as oe


def log10_flops(inputs, output, sizes, path):
    """log10 of the FLOPs opt_einsum counts for path (exact, as an integer)."""
    shapes = [tuple(sizes[c] for c in term) for term in inputs]
    eq = ",".join(inputs) + "->" + output
    _, info = oe.contract_path(eq, *shapes, shapes=True, optimize=path)
    cost = int(info.opt_cost)
    return math.log10(cost) if cost > 0 else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("networks")
    ap.add_argument("out")
    ap.add_argument("--repeats", type=int, default=32, help="random-greedy trials (opt_einsum's default: 32)")
    args = ap.parse_args()
    with open(args.networks) as f:
        nets = json.load(f)
    rg = f"random-greedy-{args.repeats}"
    results = {}
    for net in nets:
        sym = oe.get_symbol
        inputs = ["".join(sym(l) for l in term) for term in net["inputs"]]
        output = "".join(sym(l) for l in net["output"])
        sizes = {sym(l): s for l, s in enumerate(net["sizes"])}
        row = {}
        sets = [set(t) for t in inputs]
        for name, run in [
            ("opt_einsum greedy", lambda: oe.paths.greedy(sets, set(output), sizes)),
            (f"opt_einsum {rg}", lambda: oe.RandomGreedy(max_repeats=args.repeats)(sets, set(output), sizes)),
        ]:
            t0 = time.process_time()
            try:
                path = run()
            except Exception as e:  # opt_einsum's own failure is a result too
                row[name] = {"error": f"{type(e).__name__}: {e}", "seconds": time.process_time() - t0}
                print(f"{net['name']:>16} {name:>32}: {row[name]['error']}", file=sys.stderr, flush=True)
                continue
            took = time.process_time() - t0  # CPU seconds
            row[name] = {"log10_flops": log10_flops(inputs, output, sizes, path), "seconds": took}
            print(f"{net['name']:>16} {name:>32}: 10^{row[name]['log10_flops']:.2f} in {took:.1f} s", file=sys.stderr, flush=True)
        results[net["name"]] = row
    with open(args.out, "w") as f:
        json.dump({"optimizers": ["opt_einsum greedy", f"opt_einsum {rg}"], "opt_einsum": oe.__version__, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
