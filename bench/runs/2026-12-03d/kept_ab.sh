#!/usr/bin/env bash
# The hugetlb pool kept warm in a file against the pool as it was, alternated run by run on the
# same data: BEFORE (a binary of the tree before, default target/base/release/oxsort, built with
# `git worktree add /work/base 88552cb && cd /work/base && CARGO_TARGET_DIR=<top>/target/base
# cargo build --release -p oxsort-cli`) maps anonymous pages of a reserved pool, which the
# kernel clears on every run; AFTER (target/release/oxsort) maps the kept file's pages.
# Run as root: bench/runs/2026-12-03d/kept_ab.sh [RUNS] [SCRATCH_DIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
scratch=${2:-$top/bench/scratch}
before=${BEFORE:-$top/target/base/release/oxsort}
after=$top/target/release/oxsort
csv=$here/kept_ab.csv
[ -f "$csv" ] || echo "timestamp,case,variant,run,wall_s,user_s,sys_s" > "$csv"
lines=$scratch/ab.lines
recs=$scratch/ab.recs
out=$scratch/ab.out
[ -f "$lines" ] || "$top/target/release/examples/gen_lines" 4000000000 7 > "$lines"
[ -f "$recs" ] || "$after" gen --records 40000000 --quiet "$recs"
"$after" pool 5G > /dev/null
one() { # case variant run binary args...
  local case=$1 variant=$2 run=$3 bin=$4; shift 4
  if [ "$variant" = before ]; then rm -f /run/oxsort/hugepages/pool; else "$after" pool 5G > /dev/null; fi
  rm -f "$out"; sync; echo 3 > /proc/sys/vm/drop_caches
  /usr/bin/time -f "%e,%U,%S" -o /tmp/kept_ab.tm "$bin" sort "$@" -o "$out" --no-progress > /dev/null
  echo "$(date -Iseconds),$case,$variant,$run,$(tail -1 /tmp/kept_ab.tm)" >> "$csv"
}
for ((i = 1; i <= runs; i++)); do
  for v in before after; do
    b=$([ "$v" = before ] && echo "$before" || echo "$after")
    one lines "$v" "$i" "$b" --lines "$lines" --memory 5G
    one onepass "$v" "$i" "$b" "$recs" --memory 5G
    one twopass "$v" "$i" "$b" "$recs" --memory 1G
  done
done
rm -f "$out" "$lines" "$recs"; sync
"$after" pool off > /dev/null
# Medians per case and variant.
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for case in dict.fromkeys(r["case"] for r in rows):
    for v in ("before", "after"):
        rs = [r for r in rows if r["case"] == case and r["variant"] == v]
        med = lambda k: statistics.median(float(r[k]) for r in rs)
        print(f"{case:8} {v:6} n={len(rs)} wall {med('wall_s'):.2f} s  user {med('user_s'):.2f} s  sys {med('sys_s'):.2f} s")
PY
