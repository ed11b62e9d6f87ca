#!/usr/bin/python3
"""GEMM: goferro against numpy (OpenBLAS) on the same machine, in one run.

Builds ./cmd/goferro, then for every case runs `goferro bench gemm` and a
numpy subprocess alternately (--rounds times each), takes the median of each
side's medians and prints a table of GFLOP/s and goferro/numpy ratios.

numpy's BLAS: numpy is linked against libblas.so.3. If that is not OpenBLAS
on this machine but Debian's OpenBLAS is installed, the numpy subprocess
gets LD_LIBRARY_PATH=<openblas dir> so that it runs on OpenBLAS. Threads are
set per subprocess with threadpoolctl when present, else OPENBLAS_NUM_THREADS
(plus OMP_NUM_THREADS). OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed
from the numpy subprocess's environment only; the OpenBLAS core (kernel
family) numpy actually runs is read back and reported. When numpy runs the
reference BLAS and this runs as root with apt-get, Debian's
libopenblas0-pthread is installed first (--no-install-openblas: never;
nothing is removed); the report records numpy's BLAS and LAPACK
(cmd/goferro/peerblas.py) and marks ratios against a reference BLAS.

Usage: /usr/bin/python3 bench/gemm-vs-numpy.py [--rounds 3] [--quick]
       [--report bench/gemm-report.md]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "cmd", "goferro"))
import peerblas  # noqa: E402  (the probe goferro bench embeds: one place for it)
OPENBLAS_DIRS = ["/usr/lib/x86_64-linux-gnu/openblas-pthread",
                 "/usr/lib/x86_64-linux-gnu/openblas-openmp",
                 "/usr/lib/x86_64-linux-gnu/openblas-serial"]

NUMPY_WORKER = r"""
import ctypes, json, statistics, sys, time
n, dtype, batch, threads, runs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
try:
    import threadpoolctl
    limiter = threadpoolctl.threadpool_limits(threads)
    how = "threadpoolctl"
except ImportError:
    how = "OPENBLAS_NUM_THREADS"
import numpy as np
rng = np.random.default_rng(1)
shape = (batch, n, n) if batch > 1 else (n, n)
if dtype.startswith("complex"):
    a = (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)
    b = (rng.random(shape) + 1j * rng.random(shape)).astype(dtype)
else:
    a = rng.random(shape).astype(dtype)
    b = rng.random(shape).astype(dtype)
c = np.empty(shape, dtype=dtype)
np.matmul(a, b, out=c)
if runs <= 0:
    t = time.perf_counter(); np.matmul(a, b, out=c); one = time.perf_counter() - t
    runs = min(max(int(1.0 / max(one, 1e-6)), 3), 1000)
ts = []
for _ in range(runs):
    t = time.perf_counter()
    np.matmul(a, b, out=c)
    ts.append(time.perf_counter() - t)
info = {"how": how}
# Which BLAS library and which OpenBLAS core this process really runs.
libs = sorted({line.split()[-1] for line in open("/proc/self/maps") if "blas" in line.split()[-1]})
lib = next((p for p in libs if "openblas" in p), libs[0] if libs else None)
info["lib"] = lib
try:
    cl = ctypes.CDLL(lib)
    cl.openblas_get_corename.restype = ctypes.c_char_p
    cl.openblas_get_config.restype = ctypes.c_char_p
    info["core"] = cl.openblas_get_corename().decode()
    info["config"] = cl.openblas_get_config().decode()
    cl.openblas_get_num_threads.restype = ctypes.c_int
    info["threads"] = cl.openblas_get_num_threads()
except Exception:
    info["core"] = "not OpenBLAS"
info["median_s"] = statistics.median(ts)
info["runs"] = runs
print(json.dumps(info))
"""


OPENBLAS_CORETYPE = None  # --openblas-coretype: OPENBLAS_CORETYPE for numpy


def numpy_env(threads):
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    if OPENBLAS_CORETYPE:
        env["OPENBLAS_CORETYPE"] = OPENBLAS_CORETYPE
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    env["OMP_NUM_THREADS"] = str(threads)
    default = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    if "openblas" not in default:
        for d in OPENBLAS_DIRS:
            if os.path.exists(os.path.join(d, "libblas.so.3")):
                env["LD_LIBRARY_PATH"] = d + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
                break
    return env


def run_numpy(n, dtype, batch, threads, runs):
    out = subprocess.run([sys.executable, "-c", NUMPY_WORKER, str(n), dtype, str(batch), str(threads), str(runs)],
                         env=numpy_env(threads), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_goferro(exe, n, dtype, batch, threads, runs):
    env = dict(os.environ)
    env["GOMAXPROCS"] = str(max(threads, 1))
    out = subprocess.run([exe, "bench", "gemm", "-n", str(n), "-dtype", dtype, "-threads", str(threads),
                          "-batch", str(batch), "-runs", str(runs)],
                         env=env, capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    last = dict(kv.split("=", 1) for kv in lines[-1].split()[1:])
    kern = dict(kv.split("=", 1) for kv in lines[-2].split()[1:]) if len(lines) > 1 else {}
    return {"median_s": float(last["median_ms"]) / 1e3, "kernel": kern}


def runs_for(n, batch, threads):
    work = n ** 3 * batch / max(threads, 1)
    # Aim at ~0.3-0.6 s per measurement.
    return int(min(max(2.0e10 / 2 / work * 0.6, 3), 200))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer cases (smoke test)")
    ap.add_argument("--openblas-coretype", help="OPENBLAS_CORETYPE for numpy, e.g. SkylakeX (default: unset)")
    ap.add_argument("--report", help="also write the markdown report here")
    ap.add_argument("--dtypes", default="float64,float32")
    ap.add_argument("--no-install-openblas", action="store_true",
                    help="do not install Debian's libopenblas0-pthread when numpy runs the reference BLAS "
                         "(it is installed only as root, with apt-get; nothing is removed)")
    args = ap.parse_args()
    blas = peerblas.report(["numpy"], install=not args.no_install_openblas)
    if blas.get("install"):
        print(blas["install"])
    print("numpy " + peerblas.describe(blas["numpy"]), flush=True)

    tmp = tempfile.mkdtemp()
    global OPENBLAS_CORETYPE
    OPENBLAS_CORETYPE = args.openblas_coretype
    exe = os.path.join(tmp, "goferro")
    subprocess.run(["go", "build", "-o", exe, "./cmd/goferro"], cwd=ROOT, check=True)

    dtypes = args.dtypes.split(",")
    sizes = [256, 512] if args.quick else [256, 512, 1024, 2048]
    cases = []
    for threads in (1, 2):
        for dtype in dtypes:
            for n in sizes:
                cases.append((n, dtype, 1, threads))
            for n in (64, 128):
                cases.append((n, dtype, 32, threads))

    rows = []
    npinfo = None
    gkern = None
    started = datetime.datetime.now(datetime.timezone.utc)
    for (n, dtype, batch, threads) in cases:
        runs = runs_for(n, batch, threads)
        g, p = [], []
        for _ in range(args.rounds):
            gr = run_goferro(exe, n, dtype, batch, threads, runs)
            pr = run_numpy(n, dtype, batch, threads, runs)
            g.append(gr["median_s"])
            p.append(pr["median_s"])
            npinfo, gkern = pr, gr["kernel"]
        flops = 2.0 * n ** 3 * batch * (4 if dtype.startswith("complex") else 1)
        gm, pm = statistics.median(g), statistics.median(p)
        row = {"n": n, "dtype": dtype, "batch": batch, "threads": threads,
               "goferro_ms": gm * 1e3, "numpy_ms": pm * 1e3,
               "goferro_gflops": flops / gm / 1e9, "numpy_gflops": flops / pm / 1e9,
               "ratio": pm / gm}
        rows.append(row)
        ran = peerblas.kind(npinfo.get("lib") or "")
        print("%-8s n=%-5d batch=%-3d threads=%d  goferro %7.2f GFLOP/s  numpy %7.2f GFLOP/s  ratio %.3f%s" % (
            dtype, n, batch, threads, row["goferro_gflops"], row["numpy_gflops"], row["ratio"],
            "" if ran not in ("reference BLAS", "unknown") else " (numpy on the %s)" % ran), flush=True)
    finished = datetime.datetime.now(datetime.timezone.utc)

    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    numpy_ver = subprocess.run([sys.executable, "-c", "import numpy; print(numpy.__version__)"],
                               capture_output=True, text=True).stdout.strip()
    md = []
    # The worker runs numpy under its own environment (OpenBLAS put first
    # when installed): classify the library it really ran.
    ran = peerblas.kind(npinfo.get("lib") or "") if npinfo.get("lib") else "unknown"
    note = peerblas.ratio_note({"reference": ran == "reference BLAS", "blas": ran})
    md.append("# GEMM: goferro vs numpy (%s)\n" % ran)
    md.append("Command: `/usr/bin/python3 bench/gemm-vs-numpy.py --rounds %d%s`\n" % (
        args.rounds, " --quick" if args.quick else ""))
    md.append("- when: %s – %s UTC, load average at the end %s" % (
        started.strftime("%Y-%m-%d %H:%M"), finished.strftime("%H:%M"), " ".join(load)))
    md.append("- machine: %s, %d CPUs, %s" % (cpu, os.cpu_count() or 0, platform.platform()))
    md.append("- goferro: `goferro bench gemm` kernels %s" % " ".join("%s=%s" % kv for kv in (gkern or {}).items()
                                                                          if kv[0].startswith("float")))
    md.append("- numpy %s via %s; BLAS library `%s`; %s; core `%s`; threads set by %s; "
              "OPENBLAS_CORETYPE %s and OPENBLAS_L2_SIZE unset for numpy only (were: %s / %s)" % (
                  numpy_ver, sys.executable, npinfo.get("lib"), npinfo.get("config", "?"),
                  npinfo.get("core"), npinfo.get("how"), OPENBLAS_CORETYPE or "unset",
                  os.environ.get("OPENBLAS_CORETYPE", "unset"), os.environ.get("OPENBLAS_L2_SIZE", "unset")))
    md.append("- numpy's BLAS and LAPACK by default (peerblas.py): %s" % peerblas.describe(blas["numpy"]))
    md.append("- method: each case alternates goferro and numpy %d times (separate processes, same data "
              "shape, C = A·B into a preallocated C); each measurement is the median of its timed runs; "
              "the table shows the median of the %d medians. ratio = numpy time / goferro time "
              "(> 1: goferro faster).\n" % (args.rounds, args.rounds))
    if note == "reference BLAS":
        md.append("\n**numpy ran the reference BLAS**, many times slower than an optimized one: the ratios below "
                  "overstate goferro's speed. Install an optimized BLAS (Debian: `apt-get install "
                  "libopenblas0-pthread`) and run again.")
    elif note:
        md.append("\n**numpy's BLAS is unknown**: the ratios below may compare goferro with the reference BLAS.")
    md.append("")
    md.append("| dtype | n | batch | threads | goferro GFLOP/s | numpy GFLOP/s | ratio%s |" % (
        " (%s)" % note if note else ""))
    md.append("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        md.append("| %s | %d | %d | %d | %.2f | %.2f | %.3f |" % (
            r["dtype"], r["n"], r["batch"], r["threads"], r["goferro_gflops"], r["numpy_gflops"], r["ratio"]))
    text = "\n".join(md) + "\n"
    print()
    print(text)
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
