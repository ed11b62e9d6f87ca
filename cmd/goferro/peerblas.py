"""Which BLAS and LAPACK the benchmark peers (numpy, torch) run.

Usage: python3 peerblas.py [--install] BACKEND ...   (BACKEND: numpy or torch)

Prints one JSON object: for each backend, probed in a fresh interpreter so
that it sees only the libraries that backend loads, its version, the BLAS
and LAPACK it ran (threadpoolctl's report when threadpoolctl is installed,
else the shared objects mapped into the process after a matrix product and
a solve, read from /proc/self/maps), the lines of its build configuration
that name them (numpy.show_config, torch.__config__.show()) and whether
the BLAS is the reference (netlib) implementation, whose ratios mean little.

--install: when a backend runs the reference BLAS and this runs as root on
a system with apt-get, install Debian's libopenblas0-pthread (which the
libblas.so.3 alternative then selects; nothing is ever removed) and probe
again. "install" in the output says what was done.

goferro embeds this file (goferro bench) and bench/*.py import it, so the
reports of both record the peers' BLAS the same way (goferro's Go side
formats the report from this JSON as describe() and ratio_note() do).
"""

import json
import os
import re
import shutil
import subprocess
import sys

LIBRARY = re.compile(r"(blas|lapack|mkl|blis|atlas|flexiblas)", re.IGNORECASE)
OPTIMIZED = (("openblas", "OpenBLAS"), ("mkl", "MKL"), ("blis", "BLIS"), ("atlas", "ATLAS"),
             ("flexiblas", "FlexiBLAS"))
PACKAGE = "libopenblas0-pthread"


def kind(path):
    """Names the implementation a BLAS or LAPACK shared object belongs to."""
    low = path.lower()
    for key, name in OPTIMIZED:
        if key in low:
            return name
    base = os.path.basename(low)
    if base.startswith("liblapack"):
        return "reference LAPACK"
    if base.startswith("libblas") or base.startswith("libcblas"):
        return "reference BLAS"
    return "unknown"


def mapped_libraries():
    """The BLAS/LAPACK shared objects mapped into this process."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = {line.split()[-1] for line in f if "/" in line}
    except OSError:
        return []
    return sorted(os.path.realpath(p) for p in paths if LIBRARY.search(os.path.basename(p)))


def threadpool_libraries():
    """threadpoolctl's view of the BLAS libraries, when it is installed."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    return [{"api": i.get("internal_api"), "version": i.get("version"), "path": i.get("filepath")}
            for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]


def numpy_config(np):
    """What numpy.show_config says of numpy's BLAS and LAPACK."""
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
    except TypeError:  # numpy before 1.26: show_config prints its *_opt_info dicts
        return [f"{k}: libraries {getattr(np.__config__, k + '_opt_info', {}).get('libraries')}"
                for k in ("blas", "lapack")]
    return [f"{k}: {deps[k].get('name')} {deps[k].get('version', '')}".strip() for k in ("blas", "lapack") if k in deps]


def probe(backend):
    """Runs a product and a solve with backend and reports what ran them."""
    info = {"backend": backend}
    if backend == "numpy":
        import numpy as np
        a = np.ones((64, 64)) + 64 * np.eye(64)
        np.linalg.solve(a, a @ a[:, 0])
        info["version"] = np.__version__
        info["config"] = numpy_config(np)
    elif backend == "torch":
        import torch
        a = torch.ones(64, 64, dtype=torch.float64) + 64 * torch.eye(64, dtype=torch.float64)
        torch.linalg.solve(a, a @ a[:, 0])
        info["version"] = torch.__version__
        info["config"] = [s.strip(" -") for s in re.split(r",\s*|\n", torch.__config__.show())
                          if "BLAS" in s or "LAPACK" in s or "MKL" in s]
    else:
        raise SystemExit(f"peerblas.py: unknown backend {backend!r} (want numpy or torch)")
    info["libraries"] = mapped_libraries()
    pools = threadpool_libraries()
    if pools is not None:
        info["threadpoolctl"] = pools
    kinds = [kind(p) for p in info["libraries"]] + [kind(p["path"] or "") for p in pools or []]
    blas = [k for k in kinds if "LAPACK" not in k and k != "unknown"]
    lapack = [k for k in kinds if "LAPACK" in k or k in dict(OPTIMIZED).values()]
    config = " ".join(info["config"])
    # A BLAS linked into the backend's own library (MKL in torch's wheels)
    # maps no library of its own: the build configuration names it.
    if not blas:
        m = re.search(r"BLAS_INFO=(\w+)", config)
        blas = [m.group(1) if m else "unknown"]
    if not lapack:
        m = re.search(r"LAPACK_INFO=(\w+)", config)
        lapack = [m.group(1) if m else "unknown"]
    # OpenBLAS also maps a libblas.so.3 of its own: the optimized name wins.
    info["blas"] = next((k for k in blas if k != "reference BLAS"), blas[0])
    info["lapack"] = next((k for k in lapack if k != "reference LAPACK"), lapack[0])
    info["reference"] = info["blas"] == "reference BLAS"
    return info


def probe_fresh(backend, python=sys.executable):
    """probe(backend) in a new interpreter, so backends do not share libraries."""
    r = subprocess.run([python, os.path.abspath(__file__), "--one", backend],
                       capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return {"backend": backend, "error": last}
    return json.loads(r.stdout)


def install_openblas():
    """Installs Debian's OpenBLAS where this may (root, apt-get), and says what it did."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return f"not root: {PACKAGE} not installed"
    apt = shutil.which("apt-get")
    if apt is None:
        return f"no apt-get: {PACKAGE} not installed"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = [apt, "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=120", PACKAGE]
    r = subprocess.run(install, env=env, capture_output=True, text=True)
    if r.returncode != 0:  # perhaps stale package lists
        subprocess.run([apt, "update", "-q"], env=env, capture_output=True, text=True)
        r = subprocess.run(install, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return f"apt-get install {PACKAGE} failed: {last}"
    return f"installed {PACKAGE}"


def report(backends, install=False, python=sys.executable):
    """Probes each backend with python; installs OpenBLAS first if asked and needed."""
    out = {b: probe_fresh(b, python) for b in backends}
    if install and any(i.get("reference") for i in out.values()):
        out["install"] = install_openblas()
        if out["install"].startswith("installed"):
            out.update({b: probe_fresh(b, python) for b in backends})
    return out


def ratio_note(info):
    """What a ratio against this backend must say: "" for an optimized BLAS."""
    if info.get("reference"):
        return "reference BLAS"
    if info.get("error") or info.get("blas", "unknown") == "unknown":
        return "BLAS unknown"
    return ""


def describe(info):
    """One line on a backend's BLAS and LAPACK, for a report."""
    if info.get("error"):
        return f"BLAS unknown ({info['error']})"
    s = f"{info['version']}: BLAS {info['blas']}, LAPACK {info['lapack']}"
    if info.get("libraries"):
        s += " (" + ", ".join(info["libraries"]) + ")"
    if info.get("config"):
        s += "; build: " + "; ".join(info["config"])
    return s


def main(argv):
    if argv[:1] == ["--one"]:
        print(json.dumps(probe(argv[1])))
        return 0
    backends = [a for a in argv if a != "--install"]
    if not backends:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    print(json.dumps(report(backends, "--install" in argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
