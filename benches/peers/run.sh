#!/usr/bin/env bash
# Peer benchmark: privpref vs scikit-learn on the same data (see README.md in this folder).
# Creates its own venv under target/peers-venv, builds the release CLI and the streaming-read
# example (crates/privpref-cli/examples/stream_read.rs), runs run.py.
# Usage: benches/peers/run.sh [run.py options, e.g. --shapes 20000x10 --threads 1 --dtypes f64,f32]
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=target/peers-venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q -r benches/peers/requirements.txt
fi
cargo build --release --bin privpref --example stream_read
exec "$VENV/bin/python" benches/peers/run.py "$@"
