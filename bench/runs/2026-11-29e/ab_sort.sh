#!/usr/bin/env bash
# usage: ab_sort.sh RUNS A B IN MEM
runs=$1; A=$2; B=$3; in=$4; mem=$5
d=$(dirname "$in")
for i in $(seq 1 "$runs"); do
  for bin in "$A" "$B"; do
    rm -f "$d/ab.out"; sync; echo 3 > /proc/sys/vm/drop_caches; sleep 3
    /usr/bin/time -f "%e %U %S %M" -o "$d/ab.time" "$bin" sort --memory "$mem" "$in" -o "$d/ab.out" 2>/dev/null
    echo "$(basename "$bin"),$i,$(cat "$d/ab.time" | tr ' ' ',')"
  done
done
rm -f "$d/ab.out"
