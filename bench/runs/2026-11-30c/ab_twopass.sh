#!/usr/bin/env bash
# A/B of a two-pass sort of 4e7 gensort records, --memory 1G, fresh memory: builds alternated,
# cache dropped, 5 s rest. usage: ab_tp.sh RUNS A B DIR
# Superseded by bench/ab.sh (CASES=twopass REST=5: CPU seconds beside the wall time); kept as
# the script these rows were measured with.
set -euo pipefail
runs=$1 a=$2 b=$3 d=$4
echo "build,run,seconds,cpu_s,peak_kb,bytes_spilled"
for ((i = 1; i <= runs; i++)); do
  order="A B"; [ $((i % 2)) = 0 ] && order="B A"
  for which in $order; do
    bin=$a; [ "$which" = B ] && bin=$b
    rm -f "$d/tp.out"; sync; echo 3 > /proc/sys/vm/drop_caches; sleep 5
    /usr/bin/time -f "%e %U %S %M" -o "$d/time.txt" env OXSORT_HUGETLB=off "$bin" sort "$d/tp.in" -o "$d/tp.out" --memory 1G --no-progress --stats json > "$d/stats.json" 2>&1
    read -r e u s m < "$d/time.txt"
    sp=$(grep -o '"bytes_spilled": *[0-9]*' "$d/stats.json" | grep -o '[0-9]*$' || echo ?)
    echo "$which,$i,$e,$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}'),$m,$sp"
  done
done
