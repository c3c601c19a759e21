#!/usr/bin/env bash
# The private and constrained fits of bench-results/powerlaw-private.md, on the (2·10⁵, 512)
# power-law data of `benches/peers/run.py --design powerlaw --shapes 200000x512` (run it first).
# Usage (repository root): benches/powerlaw_private.sh   (PRIVPREF=path/to/privpref to override)
set -euo pipefail
P=${PRIVPREF:-target/release/privpref}
X=target/peers-data/x_powerlaw_200000x512.npy
Y=target/peers-data/y_powerlaw_200000x512.npy
export PRIVPREF_KEY_DIR=$(mktemp -d)
$P keygen > /dev/null
$P privatize --y $Y --eps 1 --seed 7 --out target/peers-data/yrr_powerlaw_200000x512.npy > /dev/null 2>&1
row() { python3 -c "
import json,sys;r=json.load(open(sys.argv[1]))
print(f\"| {sys.argv[2]} | {sys.argv[3]} ({r['solver']}) | {r['data_passes']} | {r['cg_iterations']} | {r['iterations']} | {r['elapsed_s']:.2f} | {r['kkt_residual']:.1e} | {r['objective']!r} |\")" "$@"; }
for S in lbfgs newton-cg auto; do
  $P fit --x $X --y target/peers-data/yrr_powerlaw_200000x512.npy --loss debiased-rr --eps 1 --constraint none --tol 1e-10 --threads 2 --solver $S --out /tmp/pp.json 2>/dev/null
  row /tmp/pp.json "debiased RR, ε = 1, unconstrained" $S
done
for B in 0.5 5; do for S in lbfgs newton-cg auto; do
  $P fit --x $X --y $Y --loss mle --radius $B --tol 1e-10 --threads 2 --solver $S --out /tmp/pp.json 2>/dev/null
  row /tmp/pp.json "mle, Θ_B with B = $B" $S
done; done
$P fit --x $X --y $Y --loss mle --radius 5 --central --mechanism objpert --eps 1 --delta 1e-5 --feature-bound 60 --seed 3 --tol 1e-10 --threads 2 --out /tmp/pp.json 2>/dev/null
python3 -c "
import json;r=json.load(open('/tmp/pp.json'));print('objpert', r.get('solver'), r.get('iterations'), r.get('elapsed_s'), r.get('termination'), r.get('data_passes'))"
