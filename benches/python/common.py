"""Shared pieces of the Python benchmarks: the peers harness's BTL data (in memory), machine and
version facts, and a wait for a quiet machine."""

import datetime
import os
import platform
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA_DIR = os.path.join(ROOT, "target", "py-bench-data")


def btl(n, d, seed=2026):
    """(x, y) of shape (n, d): the data of benches/peers/run.py's make_data, bit for bit (θ*
    uniform on the unit sphere, x = √2·N(0, I) rows, y ~ Bernoulli(σ(xᵀθ*)), generated in blocks
    of 2^24 values from default_rng([seed, n, d])), kept in memory instead of written."""
    rng = np.random.default_rng([seed, n, d])
    theta = rng.standard_normal(d)
    theta /= np.linalg.norm(theta)
    x = np.empty((n, d))
    y = np.empty(n, dtype=np.uint8)
    step = max(1, (1 << 24) // d)
    for i in range(0, n, step):
        j = min(n, i + step)
        xb = np.sqrt(2.0) * rng.standard_normal((j - i, d))
        p = 1.0 / (1.0 + np.exp(-(xb @ theta)))
        x[i:j] = xb
        y[i:j] = rng.random(j - i) < p
    return x, y


def btl_files(n, d):
    """Writes (if missing) x / y .npy files of btl(n, d) under target/py-bench-data."""
    os.makedirs(DATA_DIR, exist_ok=True)
    xp = os.path.join(DATA_DIR, f"x_{n}x{d}.npy")
    yp = os.path.join(DATA_DIR, f"y_{n}x{d}.npy")
    if not (os.path.exists(xp) and os.path.exists(yp)):
        x, y = btl(n, d)
        np.save(xp, x)
        np.save(yp, y)
    return xp, yp


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def git_commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def versions():
    import scipy
    import sklearn
    import threadpoolctl
    return {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "threadpoolctl": threadpoolctl.__version__,
            "privpref commit": git_commit()}


def machine():
    return {"cpu": cpu_model(), "logical CPUs": os.cpu_count()}


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def load1():
    return os.getloadavg()[0]


def wait_quiet(limit=1.5, max_wait=120.0, poll=5.0):
    """Waits (at most max_wait s) until the 1-minute load average is below `limit`; returns the
    load average at the start of the measurement."""
    t0 = time.monotonic()
    while load1() > limit and time.monotonic() - t0 < max_wait:
        print(f"  load {load1():.2f} > {limit}: waiting", file=sys.stderr)
        time.sleep(poll)
    return load1()
