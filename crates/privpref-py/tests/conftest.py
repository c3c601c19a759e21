"""Shared helpers of the Python test suite: the repository root, the CLI binary (the
independent Rust path the bindings are compared with), and BTL data."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

# A shell without job control starts a background command (`… &`) with SIGINT ignored, and
# Python then installs no KeyboardInterrupt handler; the Ctrl-C tests need Python's usual one.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def key_dir(tmp_path_factory) -> Path:
    """The CLI's key directory for this session (PRIVPREF_KEY_DIR): `privatize` creates its
    signing key pair there, never in the user's home."""
    return tmp_path_factory.mktemp("privpref-keys") / "keys"


def cli_path() -> Path:
    """The `privpref` binary: $PRIVPREF_CLI, else target/release/privpref of the repository."""
    return Path(os.environ.get("PRIVPREF_CLI", REPO / "target" / "release" / "privpref"))


@pytest.fixture(scope="session")
def cli(key_dir):
    """Runs the CLI with arguments; returns (exit code, the parsed `--out` JSON or None, stderr).

    CI sets PRIVPREF_CLI, and then a missing binary is a failure, not a skip."""
    path = cli_path()
    if not path.exists():
        if os.environ.get("PRIVPREF_CLI"):
            pytest.fail(f"PRIVPREF_CLI={path} does not exist")
        pytest.skip(f"the privpref CLI is not built ({path}); cargo build --release -p privpref-cli")

    def run(args):
        args = [str(a) for a in args]
        env = dict(os.environ, PRIVPREF_KEY_DIR=str(key_dir))
        p = subprocess.run([str(path), *args], capture_output=True, text=True, env=env)
        out = Path(args[args.index("--out") + 1]) if "--out" in args else None
        result = json.loads(out.read_text()) if out is not None and out.exists() and out.suffix == ".json" else None
        return p.returncode, result, p.stderr

    return run


def btl(n: int, d: int, seed: int = 0, scale: float = 1.0):
    """BTL pairs: x ~ N(0, I), θ* with ‖θ*‖ = scale, y ~ Bernoulli(σ(xᵀθ*)) as uint8."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=d)
    theta *= scale / np.linalg.norm(theta)
    x = rng.normal(size=(n, d))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(x @ theta)))).astype(np.uint8)
    return x, y, theta
