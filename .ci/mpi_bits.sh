#!/usr/bin/env bash
# MPI bit-identity: `mpirun -np P privpref fit …` for P = 1…4 ranks × 1, 2 threads must give the
# theta of the single-process fit, bit for bit (JSON numbers are printed round-trip exact), for
# each exact solver with the Θ_B constraint inactive and active, and for objective perturbation
# with a fixed seed. Then the failure paths: a rank that cannot read its file, bad data, a run
# under mpirun of a binary without the `mpi` feature.
# Usage: .ci/mpi_bits.sh BIN_WITH_MPI BIN_WITHOUT_MPI GEN_EXAMPLE
set -euo pipefail
BIN=$1; PLAIN=$2; GEN=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
DIR=$(mktemp -d); trap 'rm -rf "$DIR"' EXIT
# The signing key pair of privatize's side-cars: created on first use, by whichever rank wins.
export PRIVPREF_KEY_DIR="$DIR/keys"
# 200 000 × 32: 49 row blocks in 16 Hessian chunks. Dense Newton and objective perturbation
# give each rank whole chunks; L-BFGS and Newton-CG cut finer (chunks split between ranks).
"$GEN" 200000 32 "$DIR" 2>/dev/null
"$GEN" 200000 32 "$DIR/f32" f32 2>/dev/null
run() { mpirun --oversubscribe -np "$@" >"$DIR/log" 2>&1 || { cat "$DIR/log"; return 1; }; }
theta() { python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['theta']))" "$1"; }
checked=0
check() { # name, fit arguments…
  local name=$1; shift
  "$BIN" fit "$@" --out "$DIR/want.json" 2>/dev/null
  local want; want=$(theta "$DIR/want.json")
  for p in 1 2 3 4; do
    for t in 1 2; do
      run "$p" "$BIN" fit "$@" --threads "$t" --out "$DIR/got.json"
      if [ "$(theta "$DIR/got.json")" != "$want" ]; then
        echo "MPI bits differ: $name, $p ranks x $t threads"; exit 1
      fi
      python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['ranks']==int(sys.argv[2]), r['ranks']" "$DIR/got.json" "$p"
      checked=$((checked + 1))
    done
  done
  echo "  $name: theta identical for 1-4 ranks x 1-2 threads"
}
for solver in newton newton-cg lbfgs; do
  check "$solver, theta-b inactive" --x "$DIR/x.npy" --y "$DIR/y.npy" --loss mle --constraint theta-b --radius 50 --solver "$solver"
  check "$solver, theta-b active" --x "$DIR/x.npy" --y "$DIR/y.npy" --loss debiased-rr --eps 1 --constraint theta-b --radius 0.5 --solver "$solver"
done
check "lbfgs, float32 features" --x "$DIR/f32/x.npy" --y "$DIR/f32/y.npy" --loss mle --constraint theta-b --radius 50 --solver lbfgs
check "objective perturbation, seed 7" --x "$DIR/x.npy" --y "$DIR/y.npy" --loss mle --central --eps 1 --delta 1e-6 --feature-bound 12 --constraint theta-b --radius 1 --seed 7

# The pessimistic policy (Frank–Wolfe passes over 40 000 states × 4 actions × 8 features, 10
# blocks of the pass): every field of the JSON but the timing the same for any ranks × threads.
python3 - "$DIR" <<'PY'
import json, math, random, struct, sys
out = sys.argv[1]
n, a, d = 40000, 4, 8
rng = random.Random(5)
vals = []
for _ in range(n * a):
    v = [rng.gauss(0, 1) for _ in range(d)]
    nr = math.sqrt(sum(x * x for x in v))
    vals.extend(x / nr for x in v)
hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d, %d), }" % (n, a, d)
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
with open(out + "/s.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    f.write(struct.pack("<%dd" % len(vals), *vals))
c = [rng.gauss(0, 1) for _ in range(d)]
nc = math.sqrt(sum(x * x for x in c))
# A synthetic θ̂ standing for a certified fit (policy refuses one that is not `converged`).
json.dump({"theta": [0.8 * x / nc for x in c], "loss": "mle", "constraint": "ball", "radius": 1.0, "converged": True},
          open(out + "/theta.json", "w"))
PY
POLICY=(policy --theta "$DIR/theta.json" --states "$DIR/s.npy" --lambda 0.1 --confidence-radius 0.3)
same_policy() { python3 - "$1" "$2" "$3" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
diff = [k for k in a if k not in ("elapsed_s", "ranks", "threads") and a[k] != b.get(k)]
assert not diff and b["ranks"] == int(sys.argv[3]) and a.get("randomized_states_fw", 1) > 0, (diff, b["ranks"])
PY
}
for greedy in "" --greedy; do
  "$BIN" "${POLICY[@]}" $greedy --out "$DIR/pwant.json" 2>/dev/null
  for p in 1 2 3 4; do
    for t in 1 2; do
      run "$p" "$BIN" "${POLICY[@]}" $greedy --threads "$t" --out "$DIR/pgot.json" --actions-out "$DIR/pacts.npy"
      same_policy "$DIR/pwant.json" "$DIR/pgot.json" "$p" || { echo "MPI policy differs: ${greedy:-pessimistic}, $p ranks x $t threads"; exit 1; }
      checked=$((checked + 1))
    done
  done
  echo "  policy ${greedy:-(pessimistic)}: the same JSON for 1-4 ranks x 1-2 threads"
done

# Per-rank shard files (`{rank}` in --x and --y): each rank reads only its rows; theta is the
# bits of the one-process fit on the whole file. 49 blocks of 4096 rows: 3 shards cut at blocks
# 16 and 32, and 2 shards at block 24.
mkdir -p "$DIR/s3" "$DIR/s2"
cp "$DIR/x.npy" "$DIR/y.npy" "$DIR/s3/"; cp "$DIR/x.npy" "$DIR/y.npy" "$DIR/s2/"
python3 "$(dirname "$0")/split_npy.py" "$DIR/s3" 65536 131072
python3 "$(dirname "$0")/split_npy.py" "$DIR/s2" 98304
for solver in lbfgs newton-cg auto; do
  "$BIN" fit --x "$DIR/x.npy" --y "$DIR/y.npy" --loss mle --radius 5 --solver "$solver" --out "$DIR/want.json" 2>/dev/null
  for p in 3 2; do
    for t in 1 2; do
      run "$p" "$BIN" fit --x "$DIR/s$p/x.{rank}.npy" --y "$DIR/s$p/y.{rank}.npy" --loss mle --radius 5 --solver "$solver" --threads "$t" --out "$DIR/got.json"
      [ "$(theta "$DIR/got.json")" = "$(theta "$DIR/want.json")" ] || { echo "MPI shard files differ: $solver, $p shards x $t threads"; exit 1; }
      checked=$((checked + 1))
    done
  done
  echo "  $solver on per-rank shard files (3 and 2 shards x 1-2 threads): theta identical"
done

# Privatised shards: each rank privatises its own shard file (its own CSPRNG, its own output and
# side-car); the fit on the shards carries the guarantee and gives the bits of the one-process
# fit of the concatenated labels; shards randomised at different eps are refused.
run 3 "$BIN" privatize --y "$DIR/s3/y.{rank}.npy" --eps 1 --out "$DIR/s3/yp.{rank}.npy"
python3 - "$DIR" <<'PY'
import struct, sys
d = sys.argv[1]
def split(p):
    raw = open(p, "rb").read()
    hl = struct.unpack("<H", raw[8:10])[0]
    return raw[:10 + hl], raw[10 + hl:]
head = split(d + "/y.npy")[0]
open(d + "/yp_all.npy", "wb").write(head + b"".join(split(f"{d}/s3/yp.{r}.npy")[1] for r in range(3)))
PY
"$BIN" fit --x "$DIR/x.npy" --y "$DIR/yp_all.npy" --assert-provenance rr:1 --loss debiased-rr --eps 1 --radius 5 --solver lbfgs --out "$DIR/want.json" 2>/dev/null
run 3 "$BIN" fit --x "$DIR/s3/x.{rank}.npy" --y "$DIR/s3/yp.{rank}.npy" --loss debiased-rr --eps 1 --radius 5 --solver lbfgs --out "$DIR/got.json"
[ "$(theta "$DIR/got.json")" = "$(theta "$DIR/want.json")" ] || { echo "MPI privatised shards differ"; exit 1; }
python3 -c "import json,sys; v=json.load(open(sys.argv[1])); g=v['guarantee']; assert g and g['eps']==1 and g['holds_for_real_data'] and v['provenance']['verified_by'], v" "$DIR/got.json"
echo "  privatised shards (3 ranks): each its own side-car; the fit carries eps = 1 and the one-process bits"

# privatize under mpirun: each rank randomises its part of the labels from its own OS-seeded
# CSPRNG into one file with one side-car; every part flips at the rate of RR at eps = 1, and fit
# reads the provenance.
run 3 "$BIN" privatize --y "$DIR/y.npy" --eps 1 --out "$DIR/yp.npy"
python3 - "$DIR" <<'PY'
import json, math, sys
d = sys.argv[1]
def labels(p):
    raw = open(p, "rb").read()
    return raw[raw.index(b"\n") + 1:]
y, yp = labels(d + "/y.npy"), labels(d + "/yp.npy")
n = len(y)
assert len(yp) == n and set(yp) <= {0, 1}, (len(yp), set(yp))
flip = 1 / (1 + math.exp(1))
for k in range(3):  # each rank's part, and the halves between them
    a, b = k * n // 3, (k + 1) * n // 3
    rate = sum(u != v for u, v in zip(y[a:b], yp[a:b])) / (b - a)
    assert abs(rate - flip) < 6 * math.sqrt(flip * (1 - flip) / (b - a)), (k, rate, flip)
car = json.load(open(d + "/yp.npy.provenance.json"))
assert car["n"] == n and car["eps"] == 1 and car["seed"] is None, car
PY
"$BIN" fit --x "$DIR/x.npy" --y "$DIR/yp.npy" --loss debiased-rr --eps 1 --radius 5 --out "$DIR/pfit.json" 2>/dev/null
python3 -c "import json,sys; v=json.load(open(sys.argv[1])); g=v['guarantee']; assert g and g['eps']==1 and g['holds_for_real_data'] and v['provenance']['verified_by'], v" "$DIR/pfit.json"
echo "  privatize on 3 ranks: one labels file, RR's flip rate in every rank's part, its provenance read by fit"

# Failure paths: every rank stops with an error and no output is written.
fails() { # what, command…
  local what=$1; shift
  rm -f "$DIR/none.json"
  if "$@" >"$DIR/log" 2>&1; then echo "expected a failure: $what"; cat "$DIR/log"; exit 1; fi
  if [ -e "$DIR/none.json" ]; then echo "output written despite the failure: $what"; exit 1; fi
  grep -q "^privpref: " "$DIR/log" || { echo "no error message: $what"; cat "$DIR/log"; exit 1; }
  echo "  $what: $(grep -m1 "^privpref: " "$DIR/log")"
}
# Rank 1 reads another features file (a per-rank path through the environment): missing, or
# of another shape.
cat >"$DIR/rankx.sh" <<SH
#!/usr/bin/env bash
x="$DIR/x.npy"; [ "\${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && x="\$1"
exec "$BIN" fit --x "\$x" --y "$DIR/y.npy" --loss mle --radius 5 --out "$DIR/none.json"
SH
chmod +x "$DIR/rankx.sh"
fails "rank 1 cannot read its file" timeout 120 mpirun --oversubscribe -np 3 "$DIR/rankx.sh" "$DIR/missing.npy"
fails "rank 1 reads float32 features" timeout 120 mpirun --oversubscribe -np 3 "$DIR/rankx.sh" "$DIR/f32/x.npy"
python3 - "$DIR" <<'PY'
import sys, struct
d = sys.argv[1]
raw = bytearray(open(d + "/x.npy", "rb").read())
# A NaN in row 150000 (the last rank's part at 3 ranks).
off = raw.index(b"\n") + 1 + (150000 * 32 + 5) * 8
raw[off:off + 8] = struct.pack("<d", float("nan"))
open(d + "/bad.npy", "wb").write(raw)
PY
fails "a NaN in one rank's rows" timeout 120 mpirun --oversubscribe -np 3 "$BIN" fit --x "$DIR/bad.npy" --y "$DIR/y.npy" --loss mle --radius 5 --out "$DIR/none.json"
fails "a binary without the mpi feature" timeout 120 mpirun --oversubscribe -np 2 "$PLAIN" fit --x "$DIR/x.npy" --y "$DIR/y.npy" --loss mle --radius 5 --out "$DIR/none.json"
cat >"$DIR/ranks.sh" <<SH
#!/usr/bin/env bash
s="$DIR/s.npy"; [ "\${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && s="$DIR/missing.npy"
exec "$BIN" policy --theta "$DIR/theta.json" --states "\$s" --lambda 0.1 --confidence-radius 0.3 --out "$DIR/none.json"
SH
chmod +x "$DIR/ranks.sh"
fails "policy: rank 1 cannot read its states" timeout 120 mpirun --oversubscribe -np 3 "$DIR/ranks.sh"
fails "more shard files than ranks" timeout 120 mpirun --oversubscribe -np 2 "$BIN" fit --x "$DIR/s3/x.{rank}.npy" --y "$DIR/s3/y.{rank}.npy" --loss mle --radius 5 --out "$DIR/none.json"
mkdir -p "$DIR/soff"; cp "$DIR/x.npy" "$DIR/y.npy" "$DIR/soff/"; python3 "$(dirname "$0")/split_npy.py" "$DIR/soff" 1000
fails "a shard off the block boundaries" timeout 120 mpirun --oversubscribe -np 2 "$BIN" fit --x "$DIR/soff/x.{rank}.npy" --y "$DIR/soff/y.{rank}.npy" --loss mle --radius 5 --out "$DIR/none.json"
cp -r "$DIR/s3" "$DIR/smix"; "$BIN" privatize --y "$DIR/s3/y.1.npy" --eps 2 --out "$DIR/smix/yp.1.npy" >/dev/null 2>&1
fails "shards randomised at different eps" timeout 120 mpirun --oversubscribe -np 3 "$BIN" fit --x "$DIR/smix/x.{rank}.npy" --y "$DIR/smix/yp.{rank}.npy" --loss debiased-rr --eps 1 --radius 5 --out "$DIR/none.json"
fails "privatize --seed under mpirun" timeout 120 mpirun --oversubscribe -np 2 "$BIN" privatize --y "$DIR/y.npy" --eps 1 --seed 3 --out "$DIR/none.json"
fails "a K-wise fit under mpirun" timeout 120 mpirun --oversubscribe -np 2 "$BIN" fit --x "$DIR/x.npy" --y "$DIR/y.npy" --loss pl-top1 --k 2 --out "$DIR/none.json"
# A run killed mid-way (SIGKILL to mpirun after 0.2 s; its ranks lose their launcher) leaves no
# output file.
rm -f "$DIR/none.json"
status=0
timeout -s KILL 0.2 mpirun --oversubscribe -np 2 "$BIN" fit --x "$DIR/x.npy" --y "$DIR/y.npy" --loss mle-rr --eps 0.5 --radius 5 --solver newton --out "$DIR/none.json" >/dev/null 2>&1 || status=$?
sleep 2
if [ "$status" = 137 ]; then
  if [ -e "$DIR/none.json" ]; then echo "a killed run left output behind"; ls -a "$DIR"; exit 1; fi
  echo "  killed mid-way: no output file"
else
  echo "  (the run ended before the kill, status $status: the kill case was not exercised)"
fi
echo "MPI: $checked distributed runs (fits, fits on shard files, policies) identical to the single-process runs; failure paths clean"
