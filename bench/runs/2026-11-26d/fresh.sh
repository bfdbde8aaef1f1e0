#!/usr/bin/env bash
# fresh.sh CSV RUNS DIR CASE...: base and new builds (./oxsort.base, ./oxsort.new) alternated,
# one-pass sorts of DIR/rec.in (1e7 gensort records, 1 GB) to DIR/out, --memory 2G, page cache
# dropped before every run; rows case,build,run,wall,user,sys,minflt.
#   tmpfs | disk   fresh memory (OXSORT_HUGETLB=off)
#   pool           from a hugetlb pool of 1600M reserved warm by `oxsort.new pool` (both builds)
csv=$1; runs=$2; dir=$3; shift 3
for c in "$@"; do
  [ "$c" = pool ] && ./oxsort.new pool 1600M >&2
  for ((i = 1; i <= runs; i++)); do
    for b in base new; do
      rm -f "$dir/out"; sync; echo 3 > /proc/sys/vm/drop_caches
      if [ "$c" = pool ]; then e=env; else e="env OXSORT_HUGETLB=off"; fi
      t=$(/usr/bin/time -f '%e,%U,%S,%R' $e ./oxsort.$b sort "$dir/rec.in" -o "$dir/out" --memory 2G --no-progress 2>&1 >/dev/null | tail -1)
      echo "$c,$b,$i,$t" >> "$csv"
    done
  done
  [ "$c" = pool ] && ./oxsort.new pool off >&2
done
rm -f "$dir/out"
