#!/usr/bin/env bash
# One pass of 4e7 records from tmpfs to tmpfs from a kept pool of 5 GiB, BEFORE (a binary of
# 704d9e8, as place_ab.sh builds it) against AFTER (target/release/oxsort), alternated back to
# back: each run's output pages are the ones the run before freed a moment earlier, as in the
# set (place_ab.sh's tmpfs runs come 20 s apart, long enough for the VM to report the freed
# pages to the host, whose faults on them then swamp the sort's own system time).
# Run as root: bench/runs/2026-12-03e/tmpfs_ab.sh [RUNS]
set -euo pipefail
top=$(cd "$(dirname "$0")/../../.." && pwd)
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
before=${BEFORE:-$top/target/base/release/oxsort}
after=$top/target/release/oxsort
csv=$here/tmpfs_ab.csv
[ -f "$csv" ] || echo "timestamp,case,variant,run,wall_s,user_s,sys_s" > "$csv"
"$after" gen --records 40000000 --quiet /dev/shm/ab.in
"$after" pool 5G > /dev/null
for ((i = 1; i <= runs; i++)); do
  for v in before after; do
    b=$([ "$v" = before ] && echo "$before" || echo "$after")
    rm -f /dev/shm/ab.out
    /usr/bin/time -f "%e,%U,%S" -o /tmp/tmpfs_ab.tm "$b" sort -q /dev/shm/ab.in -o /dev/shm/ab.out --memory 5G --no-progress
    echo "$(date -Iseconds),tmpfs,$v,$i,$(tail -1 /tmp/tmpfs_ab.tm)" >> "$csv"
  done
done
rm -f /dev/shm/ab.in /dev/shm/ab.out
"$after" pool off > /dev/null
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for v in ("before", "after"):
    rs = [r for r in rows if r["variant"] == v]
    med = lambda k: statistics.median(float(r[k]) for r in rs)
    cpu = statistics.median((float(r["user_s"]) + float(r["sys_s"])) / 4 for r in rs)
    print(f"tmpfs {v:6} n={len(rs)} wall {med('wall_s'):.2f} s  user {med('user_s'):.2f} s  sys {med('sys_s'):.2f} s  {cpu:.2f} CPU-s/GB")
PY
