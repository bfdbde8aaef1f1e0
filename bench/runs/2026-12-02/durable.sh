#!/usr/bin/env bash
# What a durable output costs on this disk: 4 GB written direct with fio, timed end to end
# (wall clock around fio, page cache dropped before each run), with and without a final fsync,
# at full speed (bs 4M, 16 in flight, the iofloor's write) and at a sort's output pace (700 MB/s,
# bs 16M, 2 in flight), where a periodic fdatasync (every 32 writes: 512 MiB) is tried too.
# Usage: durable.sh DIR RUNS  (DIR on the disk measured; rows appended to durable.csv here).
set -euo pipefail
dir=${1:?DIR}; runs=${2:-3}
here=$(cd "$(dirname "$0")" && pwd)
csv=$here/durable.csv
[ -s "$csv" ] || echo "case,run,wall_s" > "$csv"
f=$dir/durable.fio.tmp
common=(--name=w --filename="$f" --size=4000000000 --rw=write --direct=1 --ioengine=io_uring
        --output=/dev/null)
declare -A cases=(
  [full]="--bs=4M --iodepth=16"
  [full_fsync]="--bs=4M --iodepth=16 --end_fsync=1"
  [paced_fsync]="--bs=16M --iodepth=2 --rate=700m --end_fsync=1"
  [paced_fdatasync32_fsync]="--bs=16M --iodepth=2 --rate=700m --fdatasync=32 --end_fsync=1"
)
for run in $(seq 1 "$runs"); do
  for c in full full_fsync paced_fsync paced_fdatasync32_fsync; do
    rm -f "$f"; sync; echo 3 > /proc/sys/vm/drop_caches
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    fio "${common[@]}" ${cases[$c]}
    t1=$(date +%s.%N)
    echo "$c,$run,$(echo "$t1 - $t0" | bc -l | xargs printf '%.3f')" >> "$csv"
  done
done
rm -f "$f"; sync
