#!/usr/bin/env bash
# The Python package benchmarks (see README.md in this folder): builds the Rust peer and the
# Python package into VENV, runs overhead.py and vs_sklearn.py, writes bench-results/python.md.
# Usage: benches/python/run.sh   (VENV defaults to target/py-bench-venv)
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=$(realpath -m "${VENV:-target/py-bench-venv}")
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r benches/python/requirements.txt
fi
(cd crates/privpref-py && "$VENV/bin/pip" install -q .)
cargo build --release -p privpref-cli --example py_overhead_peer
"$VENV/bin/python" benches/python/overhead.py
"$VENV/bin/python" benches/python/vs_sklearn.py
"$VENV/bin/python" benches/python/handoff.py
"$VENV/bin/python" benches/python/report.py --conclusions benches/python/conclusions.md
