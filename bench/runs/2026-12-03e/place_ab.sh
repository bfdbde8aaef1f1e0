#!/usr/bin/env bash
# Pool mappings placed with room for their header and tail, and tmpfs inputs mapped and
# rewritten into the pool (AFTER, target/release/oxsort) against the tree before (BEFORE, a
# binary of 704d9e8, built with `git worktree add /work/base 704d9e8 && cd /work/base &&
# CARGO_TARGET_DIR=<top>/target/base cargo build --release -p oxsort-cli`), alternated run by
# run on the same data, both from the same kept pool of 5 GiB: lines, one and two passes of
# records on the disk (page cache dropped before each run), one pass from tmpfs to tmpfs.
# Run as root: bench/runs/2026-12-03e/place_ab.sh [RUNS] [SCRATCH_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
scratch=${2:-$top/bench/scratch}
before=${BEFORE:-$top/target/base/release/oxsort}
after=$top/target/release/oxsort
csv=$here/place_ab.csv
[ -f "$csv" ] || echo "timestamp,case,variant,run,wall_s,user_s,sys_s" > "$csv"
lines=$scratch/ab.lines
recs=$scratch/ab.recs
out=$scratch/ab.out
[ -f "$lines" ] || "$top/target/release/examples/gen_lines" 4000000000 7 > "$lines"
[ -f "$recs" ] || "$after" gen --records 40000000 --quiet "$recs"
cp "$recs" /dev/shm/ab.recs
sync
"$after" pool 5G > /dev/null
one() { # case variant run binary output args...
  local case=$1 variant=$2 run=$3 bin=$4 o=$5; shift 5
  rm -f "$o"
  # The tmpfs case's output pages were just freed, as in the set; the disk cases start cold.
  [ "$case" = tmpfs ] || { sync; echo 3 > /proc/sys/vm/drop_caches; }
  /usr/bin/time -f "%e,%U,%S" -o /tmp/place_ab.tm "$bin" sort "$@" -o "$o" --no-progress > /dev/null
  echo "$(date -Iseconds),$case,$variant,$run,$(tail -1 /tmp/place_ab.tm)" >> "$csv"
}
for ((i = 1; i <= runs; i++)); do
  for v in before after; do
    b=$([ "$v" = before ] && echo "$before" || echo "$after")
    one lines "$v" "$i" "$b" "$out" --lines "$lines" --memory 5G
    one onepass "$v" "$i" "$b" "$out" "$recs" --memory 5G
    one twopass "$v" "$i" "$b" "$out" "$recs" --memory 1G
    one tmpfs "$v" "$i" "$b" /dev/shm/ab.out /dev/shm/ab.recs --memory 5G
  done
done
rm -f "$out" "$lines" "$recs" /dev/shm/ab.recs /dev/shm/ab.out; sync
"$after" pool off > /dev/null
# Medians per case and variant.
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for case in dict.fromkeys(r["case"] for r in rows):
    for v in ("before", "after"):
        rs = [r for r in rows if r["case"] == case and r["variant"] == v]
        med = lambda k: statistics.median(float(r[k]) for r in rs)
        cpu = statistics.median((float(r["user_s"]) + float(r["sys_s"])) / 4 for r in rs)
        print(f"{case:8} {v:6} n={len(rs)} wall {med('wall_s'):.2f} s  user {med('user_s'):.2f} s  sys {med('sys_s'):.2f} s  {cpu:.2f} CPU-s/GB")
PY
