#!/usr/bin/env bash
# A tuning sweep on tmpfs (no disk): builds that differ in one constant, alternated, RUNS
# times each, one-pass sorts of 4e7 records (4 GB) from a hugetlb pool. Run as root:
#   bench/runs/2026-12-03/sweep.sh RUNS LABEL=BIN [LABEL=BIN...]
# (2026-12-02c/ab.sh for any number of builds, the plain case only.)
# SWEEP_CSV (environment): where the rows go (default: sweep.csv beside this script).
set -euo pipefail
runs=$1; shift
csv=${SWEEP_CSV:-$(dirname "$0")/sweep.csv}
first=${1#*=}
"$first" gen --records 40000000 --quiet /dev/shm/in
"$first" pool 5G >&2
echo "timestamp,build,run,wall_s,user_s,sys_s" > "$csv"
for i in $(seq "$runs"); do
  for spec in "$@"; do
    label=${spec%%=*} bin=${spec#*=}
    rm -f /dev/shm/out
    /usr/bin/time -f "%e,%U,%S" -o /tmp/sweep.tm "$bin" sort -q /dev/shm/in -o /dev/shm/out --memory 5G --no-progress
    echo "$(date -Iseconds),$label,$i,$(tail -1 /tmp/sweep.tm)" >> "$csv"
  done
done
"$first" pool off >&2
rm -f /dev/shm/in /dev/shm/out
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for b in dict.fromkeys(x["build"] for x in rows):
    r = [x for x in rows if x["build"] == b]
    med = lambda k: statistics.median(float(x[k]) for x in r)
    u, s, w = med("user_s"), med("sys_s"), med("wall_s")
    print(f"{b:>8}: wall {w:.2f} s, user {u:.2f} s, sys {s:.2f} s, {(u+s)/4:.2f} CPU-s/GB, n={len(r)}")
PY
