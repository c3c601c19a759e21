#!/bin/bash
# `privpref fit` on one large features file, before (OLD: the features read into a buffer) and
# after (NEW: the features memory-mapped): per run, the wall time of the whole process, the fit
# time the JSON reports (`elapsed_s`) and the peak resident set (`/usr/bin/time -v`, "Maximum
# resident set size"). The two binaries run alternately, ROUNDS pairs (the first of each pair
# alternates too); each pair's ratios new/old are printed, then their medians. Then one run of
# each with /proc/PID/status sampled every 10 ms for the peaks of RssAnon (private memory: the
# buffer) and RssFile (file pages mapped into the process: the page cache itself, not a copy).
#
#   cargo run --release -p privpref-cli --example btl_npy -- 1000000 100 /tmp/btl
#   OLD=/path/to/old/privpref NEW=target/release/privpref DATA=/tmp/btl benches/mmap_fit.sh
#
# CACHE=warm (default) leaves the file in the page cache (after the first run it is served from
# memory); CACHE=cold evicts the file's pages before every run (`dd iflag=nocache count=0`,
# this file only), so each run reads it from storage. FIT_ARGS adds fit options (default none:
# --loss mle --radius 2 with the auto solver and all cores).
set -euo pipefail
: "${OLD:?path to the old privpref}" "${NEW:?path to the new privpref}" "${DATA:?directory with x.npy and y.npy}"
ROUNDS=${ROUNDS:-6}
CACHE=${CACHE:-warm}
FIT_ARGS=${FIT_ARGS:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

evict() {
  if [ "$CACHE" = cold ]; then
    dd if="$DATA/x.npy" iflag=nocache count=0 status=none
    # Check with fincore (util-linux) where it exists: no page of the file may stay cached.
    if command -v fincore >/dev/null; then
      local res
      res=$(fincore -n -b -o RES "$DATA/x.npy" | tr -d ' ')
      if [ "$res" != 0 ]; then echo "warning: $res bytes of x.npy still cached" >&2; fi
    fi
  fi
}

# One run: prints "wall_s fit_s maxrss_kb".
run() {
  evict
  local t0 t1
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  /usr/bin/time -v "$1" fit --x "$DATA/x.npy" --y "$DATA/y.npy" --loss mle --radius 2 $FIT_ARGS \
    --out "$tmp/r.json" 2>"$tmp/time.txt" >/dev/null
  t1=$(date +%s.%N)
  local rss fit
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time.txt")
  fit=$(sed -n 's/.*"elapsed_s": \([0-9.e-]*\).*/\1/p' "$tmp/r.json")
  awk -v a="$t0" -v b="$t1" -v f="$fit" -v r="$rss" 'BEGIN { printf "%.3f %.3f %d\n", b - a, f, r }'
}

# One run with /proc/PID/status sampled: prints "peak_VmRSS_kb peak_RssAnon_kb peak_RssFile_kb".
mem() {
  evict
  # shellcheck disable=SC2086
  "$1" fit --x "$DATA/x.npy" --y "$DATA/y.npy" --loss mle --radius 2 $FIT_ARGS --out "$tmp/m.json" >/dev/null 2>&1 &
  local pid=$! rss=0 anon=0 file=0 k v
  while kill -0 "$pid" 2>/dev/null; do
    while read -r k v _; do
      case $k in
        VmRSS:) [ "$v" -gt "$rss" ] && rss=$v ;;
        RssAnon:) [ "$v" -gt "$anon" ] && anon=$v ;;
        RssFile:) [ "$v" -gt "$file" ] && file=$v ;;
      esac
    done <"/proc/$pid/status" 2>/dev/null || true
    sleep 0.01
  done
  wait "$pid" || true
  echo "$rss $anon $file"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

size=$(stat -c %s "$DATA/x.npy")
echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) CPUs; x.npy $size bytes ($(awk -v s="$size" 'BEGIN{printf "%.0f", s/1024}') kB); cache=$CACHE rounds=$ROUNDS fit args: --loss mle --radius 2 $FIT_ARGS; load: $(cut -d' ' -f1-3 /proc/loadavg)"
run "$OLD" >/dev/null # warm-up (and, with CACHE=warm, brings the file into the page cache)
echo "round  old: wall fit maxrss_kB   new: wall fit maxrss_kB   new/old: wall fit"
: >"$tmp/pairs"
for i in $(seq 1 "$ROUNDS"); do
  if [ $((i % 2)) = 1 ]; then o=$(run "$OLD"); w=$(run "$NEW"); else w=$(run "$NEW"); o=$(run "$OLD"); fi
  echo "$o $w" >>"$tmp/pairs"
  echo "$i  $o   $w   $(echo "$o $w" | awk '{printf "%.3f %.3f", $4/$1, $5/$2}')"
done
col() { awk -v c="$1" '{print $c}' "$tmp/pairs" | median; }
ratio() { awk -v a="$1" -v b="$2" '{print $b/$a}' "$tmp/pairs" | median; }
echo "SUMMARY medians over $ROUNDS pairs: old wall $(col 1) s, fit $(col 2) s, load (wall - fit) $(awk '{print $1-$2}' "$tmp/pairs" | median) s, maxrss $(col 3) kB"
echo "SUMMARY medians over $ROUNDS pairs: new wall $(col 4) s, fit $(col 5) s, load (wall - fit) $(awk '{print $4-$5}' "$tmp/pairs" | median) s, maxrss $(col 6) kB"
echo "SUMMARY median of the pairs' ratios new/old: wall $(ratio 1 4), fit $(ratio 2 5), maxrss $(ratio 3 6); maxrss/file size: old $(awk -v s="$size" '{print $3*1024/s}' "$tmp/pairs" | median), new $(awk -v s="$size" '{print $6*1024/s}' "$tmp/pairs" | median)"
echo "SUMMARY median of the runs' wall / fit: old $(awk '{print $1/$2}' "$tmp/pairs" | median), new $(awk '{print $4/$5}' "$tmp/pairs" | median); largest: old $(awk '{print $1/$2}' "$tmp/pairs" | sort -n | tail -1), new $(awk '{print $4/$5}' "$tmp/pairs" | sort -n | tail -1)"
echo "MEMORY peaks (kB), sampled every 10 ms: VmRSS RssAnon RssFile"
echo "MEMORY old $(mem "$OLD")"
echo "MEMORY new $(mem "$NEW")"
echo "# end $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
