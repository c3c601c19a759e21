#!/usr/bin/env bash
# Builds the privpref wheel into a fresh virtual environment and runs the Python test suite
# (crates/privpref-py/tests). The suite compares the bindings with the CLI binary, built here.
#
#   crates/privpref-py/test.sh              # latest numpy and scikit-learn
#   NUMPY="numpy==1.24.4" SKLEARN="scikit-learn==1.2.2" crates/privpref-py/test.sh   # the oldest supported
#
# VENV (default target/py-venv) is recreated on every run; PYTHON picks the interpreter (>= 3.9).
# WHEEL=path/to/privpref-*.whl installs that wheel instead of building one (one abi3 wheel serves
# every environment); WHEEL_OUT=dir keeps the wheel this run builds there.
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET=${CARGO_TARGET_DIR:-target}
VENV=${VENV:-$TARGET/py-venv}
PYTHON=${PYTHON:-python3}
NUMPY=${NUMPY:-"numpy>=1.24"}
SKLEARN=${SKLEARN:-"scikit-learn>=1.2"}

rm -rf "$VENV"
if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
  # Debian's python3 ships venv separately.
  SUDO=""; if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
  rm -rf "$VENV"; "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
# pandas: scikit-learn's estimator checks also feed pandas objects when it is installed.
"$VENV/bin/python" -m pip install -q "$NUMPY" "$SKLEARN" pandas "pytest>=7"
if [ -n "${WHEEL:-}" ]; then
  "$VENV/bin/python" -m pip install -q "$WHEEL"
elif [ -n "${WHEEL_OUT:-}" ]; then
  # What the documented install command (pip install ./crates/privpref-py) does, with the wheel kept.
  "$VENV/bin/python" -m pip wheel -q --no-deps -w "$WHEEL_OUT" ./crates/privpref-py
  "$VENV/bin/python" -m pip install -q "$WHEEL_OUT"/privpref-*.whl
else
  # The one documented install command: maturin (fetched by pip) builds the abi3 wheel.
  "$VENV/bin/python" -m pip install -q ./crates/privpref-py
fi
cargo build --release -q -p privpref-cli
"$VENV/bin/python" -c "import numpy, privpref, sys; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'privpref', privpref.__version__)"
PRIVPREF_CLI="$(cd "$TARGET" && pwd)/release/privpref" "$VENV/bin/python" -m pytest -q -p no:cacheprovider crates/privpref-py/tests "$@"
