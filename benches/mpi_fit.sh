#!/usr/bin/env bash
# The MPI path at P = 1 against the local path, paired: `privpref fit` (built without MPI) and
# `mpirun -np 1 privpref fit` (built with --features mpi) on the same (N, D) .npy, alternating
# A B B A so drift cancels, 1 thread each. Reports the fit time (the JSON's elapsed_s, which
# excludes process start and mpirun's launch) and the wall time of each, per solver, and the
# same pairs at P = 2 ranks x 1 thread against 1 process x 2 threads.
# Usage: benches/mpi_fit.sh PLAIN_BIN MPI_BIN GEN_EXAMPLE [N D ROUNDS]   (default 1000000 100 5)
set -euo pipefail
PLAIN=$1; MPI=$2; GEN=$3; N=${4:-1000000}; D=${5:-100}; ROUNDS=${6:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
DIR=$(mktemp -d); trap 'rm -rf "$DIR"' EXIT
"$GEN" "$N" "$D" "$DIR" 2>/dev/null
one() { # label, command… → "label elapsed_s wall_s"
  local label=$1; shift
  local s e
  s=$(date +%s.%N); "$@" --out "$DIR/r.json" 2>/dev/null; e=$(date +%s.%N)
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r['elapsed_s'], float(sys.argv[4]) - float(sys.argv[3]), r['data_passes'])" "$DIR/r.json" "$label" "$s" "$e"
}
ARGS=(fit --x "$DIR/x.npy" --y "$DIR/y.npy" --loss mle --radius 10)
for solver in lbfgs newton; do
  for _ in $(seq "$ROUNDS"); do
    one "$solver local-1t" "$PLAIN" "${ARGS[@]}" --solver "$solver" --threads 1
    one "$solver mpi-P1-1t" mpirun -np 1 "$MPI" "${ARGS[@]}" --solver "$solver" --threads 1
    one "$solver mpi-P1-1t" mpirun -np 1 "$MPI" "${ARGS[@]}" --solver "$solver" --threads 1
    one "$solver local-1t" "$PLAIN" "${ARGS[@]}" --solver "$solver" --threads 1
    one "$solver local-2t" "$PLAIN" "${ARGS[@]}" --solver "$solver" --threads 2
    one "$solver mpi-P2-1t" mpirun -np 2 "$MPI" "${ARGS[@]}" --solver "$solver" --threads 1
  done
done | python3 -c "
import sys, statistics as st
rows = {}
for line in sys.stdin:
    solver, mode, fit, wall, passes = line.split()
    rows.setdefault((solver, mode), []).append((float(fit), float(wall), int(passes)))
print('| solver | run | median fit s | median wall s | passes | runs |')
print('|---|---|---|---|---|---|')
for (solver, mode), v in rows.items():
    print(f'| {solver} | {mode} | {st.median(x[0] for x in v):.3f} | {st.median(x[1] for x in v):.3f} | {v[0][2]} | {len(v)} |')
print()
for solver in ['lbfgs', 'newton']:
    for a, b in [('mpi-P1-1t', 'local-1t'), ('mpi-P2-1t', 'local-2t')]:
        fa = st.median(x[0] for x in rows[(solver, a)]); fb = st.median(x[0] for x in rows[(solver, b)])
        wa = st.median(x[1] for x in rows[(solver, a)]); wb = st.median(x[1] for x in rows[(solver, b)])
        print(f'{solver}: {a} / {b}: fit time {fa / fb:.3f}, wall {wa / wb:.3f}')
"
