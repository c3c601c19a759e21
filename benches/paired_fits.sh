#!/bin/sh
# Paired before/after fit times: two builds of examples/large_fit (OLD and NEW, paths to the
# binaries) run alternately, ROUNDS times per (solver, threads), at (n, d) = (N, D) (default
# 1e6 × 100, BTL data, mle on Θ_B with B = 2). Each process fits 3 times and reports its fastest
# fit (SUMMARY min_s, the fit alone, data generation excluded); the pairs are printed with
# their ratio new/old, then the median ratio per configuration. Build the old binary from a
# worktree of the earlier commit, e.g.
#   git worktree add /tmp/old <commit> && (cd /tmp/old && cargo build --release --example large_fit)
#   OLD=/tmp/old/target/release/examples/large_fit NEW=target/release/examples/large_fit benches/paired_fits.sh
set -e
: "${OLD:?path to the old large_fit}" "${NEW:?path to the new large_fit}"
N=${N:-1000000}
D=${D:-100}
ROUNDS=${ROUNDS:-6}
CONFIGS=${CONFIGS:-"lbfgs:1 lbfgs:2 auto:1 newton-cg:1 newton:1"}
echo "# $(date -u +%FT%TZ) $(uname -n) n=$N d=$D rounds=$ROUNDS load: $(cut -d' ' -f1-3 /proc/loadavg)"
for c in $CONFIGS; do
  s=${c%%:*}; t=${c##*:}
  ratios=""
  for i in $(seq 1 "$ROUNDS"); do
    o=$("$OLD" "$N" "$D" mle "$t" "$s" 3 2>/dev/null | sed -n 's/^SUMMARY.*min_s=\([0-9.]*\).*/\1/p')
    w=$("$NEW" "$N" "$D" mle "$t" "$s" 3 2>/dev/null | sed -n 's/^SUMMARY.*min_s=\([0-9.]*\).*/\1/p')
    r=$(awk -v a="$w" -v b="$o" 'BEGIN { printf "%.3f", a / b }')
    ratios="$ratios $r"
    echo "$s threads=$t round $i: old $o s, new $w s, new/old $r"
  done
  med=$(echo "$ratios" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
  echo "SUMMARY $s threads=$t median new/old $med over $ROUNDS pairs"
done
echo "# end $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
