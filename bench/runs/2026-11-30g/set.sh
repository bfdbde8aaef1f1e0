#!/usr/bin/env bash
# The #27 set, measured together (2026-11-30, 15:11-15:39 UTC): the disk cases, then tmpfs to
# tmpfs (/dev/shm). Run as root from anywhere: bench/runs/2026-11-30g/set.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
export RUN_DIR=$PWD/bench/runs/2026-11-30g
echo "== sort $(date)"; bench/sort.sh onepass,twopass4 5
echo "== lines $(date)"; bench/lines.sh 4000000000 5
echo "== typed $(date)"; bench/typed.sh 40000000 5
echo "== tmpfs $(date)"
B=target/release/oxsort
$B gen --records 40000000 --quiet /dev/shm/in
csv=$RUN_DIR/tmpfs.csv
echo "timestamp,case,run,wall_s,user_s,sys_s,peak_rss_kb" > $csv
for v in fresh pool; do
  [ $v = pool ] && $B pool 5G >&2
  for i in 1 2 3 4 5; do
    rm -f /dev/shm/out
    E=on; [ $v = fresh ] && E=off
    OXSORT_HUGETLB=$E /usr/bin/time -f "%e,%U,%S,%M" -o /tmp/tm.txt $B sort -q /dev/shm/in -o /dev/shm/out --memory 5G --no-progress
    echo "$(date -Iseconds),onepass_tmpfs_$v,$i,$(tail -1 /tmp/tm.txt)" >> $csv
  done
done
$B valsort -q /dev/shm/out && echo "tmpfs output sorted"
$B pool off
rm -f /dev/shm/in /dev/shm/out
echo "== done $(date)"
