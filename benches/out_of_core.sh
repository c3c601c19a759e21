#!/usr/bin/env bash
# Out-of-core fit: a memory-mapped .npy larger than RAM, fitted by L-BFGS to the KKT tolerance.
# Writes DIR/x.npy (N × D float32) with the btl_npy example unless it exists, drops the page
# cache (needs root; skipped otherwise), times a plain sequential read of the file (dd), then
# `privpref fit` with its peak anonymous and file-backed resident memory sampled from
# /proc/PID/status every 0.2 s.
# Usage: benches/out_of_core.sh DIR [N D]   (default 26000000 256: 26.6 GB)
set -euo pipefail
DIR=$1; N=${2:-26000000}; D=${3:-256}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/target/release/privpref
[ -e "$DIR/x.npy" ] || "$ROOT/target/release/examples/btl_npy" "$N" "$D" "$DIR" f32
drop() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || echo "(page cache not dropped: not root)"; }
echo "file: $(stat -c %s "$DIR/x.npy") bytes; RAM: $(free -b | awk '/Mem:/ {print $2}') bytes"
drop
echo "sequential read (dd, 16 MiB blocks, cold cache):"
dd if="$DIR/x.npy" of=/dev/null bs=16M 2>&1 | tail -1
drop
START=$(date +%s.%N)
"$BIN" fit --x "$DIR/x.npy" --y "$DIR/y.npy" --loss mle --radius 10 --solver lbfgs --threads 2 --out "$DIR/fit.json" &
PID=$!
peak_anon=0; peak_file=0
while kill -0 $PID 2>/dev/null; do
  if read -r a f < <(awk '/RssAnon/ {a=$2} /RssFile/ {f=$2} END {print a+0, f+0}' /proc/$PID/status 2>/dev/null); then
    [ "$a" -gt "$peak_anon" ] && peak_anon=$a
    [ "$f" -gt "$peak_file" ] && peak_file=$f
  fi
  sleep 0.2
done
wait $PID
WALL=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$START" "$(date +%s.%N)")
echo "privpref fit wall time: $WALL s (process start to exit, cold page cache)"
python3 - "$DIR/fit.json" "$peak_anon" "$peak_file" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"fit: {r['solver']} {r['termination']}, certified_global={r['certified_global']}, "
      f"kkt {r['kkt_residual']:.2e} <= {r['kkt_tol']:.2e}, iterations {r['iterations']}, "
      f"data passes {r['data_passes']}, fit time {r['elapsed_s']:.1f} s")
gb = r['n'] * r['d'] * 4 / 1e9
print(f"bytes touched: (data passes + 1 validation pass) x {gb:.1f} GB = {(r['data_passes'] + 1) * gb:.0f} GB")
print(f"peak RssAnon {int(sys.argv[2]) / 1024:.0f} MiB, peak RssFile {int(sys.argv[3]) / 1024:.0f} MiB")
PY
