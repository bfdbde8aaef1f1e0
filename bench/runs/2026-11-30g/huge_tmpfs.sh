#!/usr/bin/env bash
# tmpfs_huge.csv: the one-pass tmpfs sort on a tmpfs mounted with huge pages (/dev/shm here has
# shmem_enabled=never: 4 KiB pages). Run as root from the repository's top.
set -euo pipefail
B=target/release/oxsort
mkdir -p /mnt/hp && mount -t tmpfs -o size=10G,huge=always tmpfs /mnt/hp
$B gen --records 40000000 --quiet /mnt/hp/in
csv=bench/runs/2026-11-30g/tmpfs_huge.csv
echo "timestamp,case,run,wall_s,user_s,sys_s,peak_rss_kb" > $csv
for v in fresh pool; do
  [ $v = pool ] && $B pool 5G >&2
  for i in 1 2 3 4 5; do
    rm -f /mnt/hp/out; E=on; [ $v = fresh ] && E=off
    OXSORT_HUGETLB=$E /usr/bin/time -f "%e,%U,%S,%M" -o /tmp/tm.txt $B sort -q /mnt/hp/in -o /mnt/hp/out --memory 5G --no-progress
    echo "$(date -Iseconds),onepass_tmpfs_huge_$v,$i,$(tail -1 /tmp/tm.txt)" >> $csv
  done
done
$B valsort -q /mnt/hp/out && echo sorted
$B pool off; umount /mnt/hp
