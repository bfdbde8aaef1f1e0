#!/usr/bin/env bash
# The #27 set, measured together (2026-11-30, 15:11-15:39 UTC): the disk cases, then tmpfs to
# tmpfs (/dev/shm). Run as root from anywhere: bench/runs/2026-11-30g/set.sh
# `set.sh tmpfs DIR NAME` runs only the tmpfs part, on DIR, into NAME.csv (huge_tmpfs.sh).
set -uo pipefail
cd "$(dirname "$0")/../../.."
export RUN_DIR=${RUN_DIR:-$PWD/bench/runs/2026-11-30g}
B=target/release/oxsort

# tmpfs DIR NAME: 4e7 records sorted in one pass from DIR to DIR, 5 runs with fresh memory and
# 5 from a pool, into NAME.csv (cases onepass_NAME_fresh, onepass_NAME_pool).
tmpfs() {
  local dir=$1 name=$2 csv=$RUN_DIR/$2.csv v i e
  $B gen --records 40000000 --quiet "$dir/in"
  echo "timestamp,case,run,wall_s,user_s,sys_s,peak_rss_kb" > "$csv"
  for v in fresh pool; do
    [ $v = pool ] && $B pool 5G >&2
    for i in 1 2 3 4 5; do
      rm -f "$dir/out"
      e=on; [ $v = fresh ] && e=off
      OXSORT_HUGETLB=$e /usr/bin/time -f "%e,%U,%S,%M" -o /tmp/tm.txt $B sort -q "$dir/in" -o "$dir/out" --memory 5G --no-progress
      echo "$(date -Iseconds),onepass_${name}_$v,$i,$(tail -1 /tmp/tm.txt)" >> "$csv"
    done
  done
  $B valsort -q "$dir/out" && echo "$name output sorted"
  $B pool off
  rm -f "$dir/in" "$dir/out"
}

if [ "${1:-}" = tmpfs ]; then
  tmpfs "$2" "$3"
  exit
fi
echo "== sort $(date)"; bench/sort.sh onepass,twopass4 5
echo "== lines $(date)"; bench/lines.sh 4000000000 5
echo "== typed $(date)"; bench/typed.sh 40000000 5
echo "== tmpfs $(date)"; tmpfs /dev/shm tmpfs
echo "== done $(date)"
