#!/usr/bin/env bash
# #27's set on this session's host, into this directory: 2026-11-30g's disk cases and tmpfs to
# tmpfs (GNU sort on the lines run once: it takes minutes a run), the tmpfs copy the tmpfs case
# is read against, then bench/ray_cluster.py, 5 runs.
# Run as root from anywhere, with a Python that has the package and Ray:
#   PY=target/py-venv/bin/python bench/runs/2026-12-03b/set.sh
# OUT=DIR writes the figures into DIR instead of this directory (a later run of the same set).
top=$(cd "$(dirname "$0")/../../.." && pwd)
out=${OUT:-$(dirname "$0")}
mkdir -p "$out"
here=$(cd "$out" && pwd)
export RUN_DIR=$here GNU_RUNS=1
"$top/bench/runs/2026-11-30g/set.sh"
echo "== tmpfs copy $(date)"
B=$top/target/release/oxsort
$B gen --records 40000000 --quiet /dev/shm/in
echo "timestamp,case,run,wall_s,user_s,sys_s" > "$here/copy.csv"
for i in 1 2 3 4 5; do
  rm -f /dev/shm/cp
  /usr/bin/time -f "%e,%U,%S" -o /tmp/tm.txt cp /dev/shm/in /dev/shm/cp
  echo "$(date -Iseconds),tmpfs_copy,$i,$(tail -1 /tmp/tm.txt)" >> "$here/copy.csv"
done
rm -f /dev/shm/in /dev/shm/cp
echo "== ray $(date)"
"${PY:-python3}" "$top/bench/ray_cluster.py" --runs 5 --out "$here"
echo "== all done $(date)"
