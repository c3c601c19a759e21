#!/bin/sh
# The solver-choice measurements of bench-results/fits.md: exact fits of examples/large_fit at
# n·d = 2e7 (160 MB of f64 features) for d = 10 … 2000, plus (1e6, 100), by dense Newton,
# Newton-CG and L-BFGS, for the convex mle and the non-convex mle-rr (ε = 1), on Θ_B (B = 2),
# with THREADS threads (default 2), REPS runs each (default 3). Prints one SUMMARY line per
# (shape, loss, solver). Not part of `cargo test`; takes minutes. The machine should be quiet.
set -e
THREADS=${THREADS:-2}
REPS=${REPS:-3}
SET=${SET:-theta-b}
SIGNAL=${SIGNAL:-1}
SHAPES=${SHAPES:-"2000000:10 666666:30 200000:100 66666:300 20000:1000 10000:2000 1000000:100"}
LOSSES=${LOSSES:-"mle mle-rr:1"}
SOLVERS=${SOLVERS:-"newton newton-cg lbfgs"}
cargo build --release --example large_fit >/dev/null 2>&1
BIN=target/release/examples/large_fit
echo "# $(date -u +%FT%TZ) $(uname -n) threads=$THREADS reps=$REPS set=$SET signal=$SIGNAL load: $(cut -d' ' -f1-3 /proc/loadavg)"
for shape in $SHAPES; do
  n=${shape%%:*}; d=${shape##*:}
  for loss in $LOSSES; do
    for solver in $SOLVERS; do
      $BIN "$n" "$d" "$loss" "$THREADS" "$solver" "$REPS" "$SET" "$SIGNAL" 2>/dev/null | grep -E "^\[1/|^SUMMARY"
    done
  done
done
echo "# end $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
