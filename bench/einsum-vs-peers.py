#!/usr/bin/env python3
"""Benchmark `goferro einsum --instance` against numpy and torch on the einsum instances.

For every instance JSON (default: shared/einsum-instances), alternating which side
runs first, it runs

  * goferro einsum --instance F --strategy S --runs N --threads T   (GOMAXPROCS=T)
  * shared/bench/einsum-peers.py F --strategy S --runs N --threads T --backends numpy,torch

and writes a Markdown report (default bench/einsum-report.md) with the per-instance
medians and the ratios peer_ms / goferro_ms (above 1: goferro is faster).

Usage:
    bench/einsum-vs-peers.py [--instances DIR] [--runs 5] [--threads 1] [--strategy opt_flops]
        [--goferro-strategy search]
        [--goferro PATH] [--peers PATH] [--python /usr/bin/python3] [--budget 20] [--cap 60]
        [--out bench/einsum-report.md] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "cmd" / "goferro"))
import peerblas  # noqa: E402  (the probe goferro bench embeds: one place for it)


def find_shared(name):
    for base in (ROOT / "shared", ROOT.parent / "shared"):
        if (base / name).exists():
            return base / name
    return ROOT / "shared" / name


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--instances", default=str(find_shared("einsum-instances")))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--strategy", default="opt_flops")
    p.add_argument("--goferro-strategy", default="",
                   help="goferro's --strategy when it differs from the peers' (e.g. search: its own path)")
    p.add_argument("--goferro", default="", help="goferro binary (default: build one into a temp dir)")
    p.add_argument("--peers", default=str(find_shared("bench") / "einsum-peers.py"))
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--budget", type=float, default=20.0, help="peers: seconds per instance/backend")
    p.add_argument("--cap", type=float, default=60.0, help="peers: abandon a replay slower than this")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before a goferro run is abandoned")
    p.add_argument("--out", default=str(ROOT / "bench" / "einsum-report.md"))
    p.add_argument("--reuse-output", action="store_true",
                   help="goferro: each timed run writes over the previous result (goferro einsum --reuse-output); "
                        "the peers still allocate theirs")
    p.add_argument("--only", default="", help="run only instances whose file name contains this")
    p.add_argument("--no-install-openblas", action="store_true",
                   help="do not install Debian's libopenblas0-pthread when a peer runs the reference BLAS "
                        "(it is installed only as root, with apt-get; nothing is removed)")
    return p.parse_args()


def build_goferro(tmp):
    exe = Path(tmp) / "goferro"
    subprocess.run(["go", "build", "-o", str(exe), "./cmd/goferro"], cwd=ROOT, check=True)
    return str(exe)


def run_goferro(exe, inst, a):
    env = dict(os.environ, GOMAXPROCS=str(a.threads))
    cmd = [exe, "einsum", "--instance", str(inst), "--strategy", a.goferro_strategy or a.strategy, "--runs", str(a.runs),
           "--threads", str(a.threads)] + (["--reuse-output"] if a.reuse_output else [])
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout>{a.timeout:g}s"}
    last = (r.stdout.strip().splitlines() or [""])[-1]
    if r.returncode != 0 or not last.startswith("instance="):
        return {"status": f"exit {r.returncode}: {r.stderr.strip()[-200:]}"}
    rec = dict(kv.split("=", 1) for kv in last.split())
    rec["median_ms"] = float(rec["median_ms"])
    rec["plan_ms"] = float(rec["plan_ms"]) if "plan_ms" in rec else None
    rec["status"] = "ok"
    return rec


def run_peers(inst, a):
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as f:
        jpath = f.name
    cmd = [a.python, a.peers, str(inst), "--strategy", a.strategy, "--runs", str(a.runs),
           "--threads", str(a.threads), "--backends", "numpy,torch", "--budget", str(a.budget),
           "--cap", str(a.cap), "--json", jpath]
    r = subprocess.run(cmd, capture_output=True, text=True)
    header = next((ln for ln in r.stdout.splitlines() if ln.startswith("# numpy")), "")
    out = {"header": header}
    try:
        with open(jpath, encoding="utf-8") as fh:
            for ln in fh:
                rec = json.loads(ln)
                if rec.get("mode") in ("numpy-steps", "torch-steps"):
                    out[rec["mode"].split("-")[0]] = rec
    finally:
        os.unlink(jpath)
    if r.returncode != 0:
        out["error"] = r.stderr.strip()[-300:]
    return out


def host_cpu(exe):
    """The CPU model and the GEMM kernels goferro chose on it (`goferro devices`)."""
    cpu = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), "?")
    except OSError:
        pass
    r = subprocess.run([exe, "devices"], capture_output=True, text=True)
    simd = next((ln.split(":", 1)[1].strip() for ln in r.stdout.splitlines() if ln.strip().startswith("simd:")), "?")
    return f"CPU {cpu}; goferro: {simd}"


def fmt_ms(x):
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def main():
    a = parse_args()
    files = sorted(p for p in Path(a.instances).glob("*.json") if p.name != "permutation_patterns.json")
    if a.only:
        files = [f for f in files if a.only in f.name]
    tmp = tempfile.mkdtemp()
    exe = a.goferro or build_goferro(tmp)
    blas = peerblas.report(["numpy", "torch"], install=not a.no_install_openblas, python=a.python)
    if blas.get("install"):
        print(blas["install"])
    for b in ("numpy", "torch"):
        print(f"{b} {peerblas.describe(blas[b])}")
    rows = []
    header = ""
    t_start = datetime.datetime.now(datetime.timezone.utc)
    load0 = os.getloadavg()
    for i, f in enumerate(files):
        order = ["goferro", "peers"] if i % 2 == 0 else ["peers", "goferro"]
        g = p = None
        for side in order:
            if side == "goferro":
                g = run_goferro(exe, f, a)
            else:
                p = run_peers(f, a)
        header = header or p.get("header", "")
        row = {"name": f.stem, "goferro": g, "numpy": p.get("numpy"), "torch": p.get("torch"), "peer_error": p.get("error")}
        rows.append(row)
        gm = g.get("median_ms") if g.get("status") == "ok" else None
        print(f"{f.stem:<54} goferro {fmt_ms(gm):>10} (plan {fmt_ms(g.get('plan_ms')):>8})  numpy {fmt_ms((p.get('numpy') or {}).get('median_ms')):>10}"
              f"  torch {fmt_ms((p.get('torch') or {}).get('median_ms')):>10}", flush=True)
    load1 = os.getloadavg()
    write_report(a, rows, header, t_start, load0, load1, blas, host_cpu(exe))
    print(f"wrote {a.out}")


def write_report(a, rows, header, t_start, load0, load1, blas, cpu):
    lines = []
    lines.append("# goferro einsum vs numpy / torch\n")
    lines.append(f"Generated by `bench/einsum-vs-peers.py` on {t_start:%Y-%m-%d %H:%M} UTC; "
                 f"host {platform.node()} ({os.cpu_count()} CPUs, {platform.processor() or platform.machine()}), "
                 f"load average {load0[0]:.1f} at start, {load1[0]:.1f} at end. {cpu}.\n")
    own = a.goferro_strategy and a.goferro_strategy != a.strategy
    if own:
        lines.append(f"goferro plans its own path (`--strategy {a.goferro_strategy}`; planning time is not "
                     f"in the medians but beside them), the peers replay the stored `{a.strategy}` path. The stored log10 FLOPs of "
                     f"bin_* and nary_* instances count FLOPs differently (see the instances' README).")
    lines.append(f"Strategy `{a.strategy}` (stored path replayed by every side), {a.threads} thread(s), "
                 f"median of {a.runs} runs after a warm-up. goferro: `goferro einsum --instance` with "
                 f"GOMAXPROCS={a.threads}" + (" and --reuse-output (each timed run writes over the previous "
                 "result; the peers allocate theirs)" if a.reuse_output else "") + f"; peers: `shared/bench/einsum-peers.py` (pairwise replay with "
                 f"numpy.einsum(optimize=True) per step and torch.einsum per step). {header.lstrip('# ')}\n")
    for b in ("numpy", "torch"):
        lines.append(f"- {b} {peerblas.describe(blas[b])}")
    lines.append("")
    lines.append("Ratios are peer time / goferro time: above 1 means goferro is faster. "
                 "Runs alternate (goferro first on even rows, peers first on odd rows). "
                 "goferro plan ms: planning the path (or replaying the stored one) and lowering it for the CPU, "
                 "once per process, outside the medians; the peers' per-step path handling is inside theirs.\n")
    notes = {b: peerblas.ratio_note(blas[b]) for b in ("numpy", "torch")}
    for b, note in notes.items():
        if note == "reference BLAS":
            lines.append(f"**{b} ran the reference BLAS**, many times slower than an optimized one: the {b} "
                         f"ratios below overstate goferro's speed. Install an optimized BLAS (Debian: "
                         f"`apt-get install libopenblas0-pthread`) and run again.\n")
        elif note:
            lines.append(f"**{b}'s BLAS is unknown**: the {b} ratios below may compare goferro with the reference BLAS.\n")
    head = {b: f"{b} / goferro" + (f" ({n})" if n else "") for b, n in notes.items()}
    best_head = "best peer / goferro" + (" (reference or unknown BLAS)" if any(notes.values()) else "")
    extra = " goferro path log10 FLOPs | stored path log10 FLOPs |" if own else ""
    lines.append(f"| instance | goferro ms | goferro plan ms | numpy ms | torch ms | {head['numpy']} | {head['torch']} | {best_head} |" + extra)
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if own else ""))
    ratios_best = []
    wins = 0
    counted = 0
    for r in rows:
        g = r["goferro"]
        gm = g.get("median_ms") if g.get("status") == "ok" else None
        def peer(k):
            rec = r[k]
            if not rec or "median_ms" not in rec:
                return None, "—"
            st = rec.get("status", "")
            note = "" if st in ("ok", "") else f" ({st})"
            return rec["median_ms"], fmt_ms(rec["median_ms"]) + note
        nm, ns = peer("numpy")
        tm, ts = peer("torch")
        def ratio(x):
            return f"{x / gm:.2f}" if x is not None and gm else "—"
        best = min([x for x in (nm, tm) if x is not None], default=None)
        if best is not None and gm:
            ratios_best.append(best / gm)
            counted += 1
            wins += best >= gm
        gs = fmt_ms(gm) if gm is not None else g.get("status", "?")
        ps = fmt_ms(g.get("plan_ms"))
        cols = ""
        if own:
            stored = json.loads(Path(a.instances, r["name"] + ".json").read_text())["paths"][a.strategy]["log10_flops"]
            cols = f" {g.get('log10_flops', '—')} | {stored:.4f} |"
        lines.append(f"| {r['name']} | {gs} | {ps} | {ns} | {ts} | {ratio(nm)} | {ratio(tm)} | {ratio(best)} |" + cols)
    if ratios_best:
        geo = math.exp(sum(math.log(x) for x in ratios_best) / len(ratios_best))
        lines.append("")
        against = " (against a reference or unknown BLAS)" if any(notes.values()) else ""
        lines.append(f"goferro is at least as fast as the faster peer on **{wins} of {counted}** instances; "
                     f"geometric mean of best-peer/goferro ratios: **{geo:.2f}**{against}.")
        lines.append("")
        lines.append("Peer times marked over-cap or first-run-over-budget are single runs (a lower bound for "
                     "over-cap). Timings on a shared machine are noisy; compare ratios from one run.")
    Path(a.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
