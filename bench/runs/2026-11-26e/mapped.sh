#!/usr/bin/env bash
# mapped.sh CSV RUNS DIR: one-pass sorts of DIR/rec.in (4e7 gensort records, 4 GB) to DIR/out
# on the disk with fresh memory (OXSORT_HUGETLB=off), input mapped (the default now) and read
# (OXSORT_MAP_INPUT=off, what the sort did before) alternated run by run, --memory 5G, 2
# threads; before every run the output is removed, the page cache dropped and the machine
# left 8 s so the memory freed by the run before is handed back to the host (fresh for this
# run, as for a sort started on its own). Rows: case,run,wall,user,sys,minflt,maxrss_kb.
set -euo pipefail
csv=$1; runs=$2; dir=$3
bin=${BIN:-target/release/oxsort}
[ -s "$csv" ] || echo "case,run,wall_s,user_s,sys_s,minor_faults,maxrss_kb" > "$csv"
for ((i = 1; i <= runs; i++)); do
  for m in on off; do
    rm -f "$dir/out"; sync; echo 3 > /proc/sys/vm/drop_caches; sleep 8
    t=$(/usr/bin/time -f '%e,%U,%S,%R,%M' env OXSORT_HUGETLB=off OXSORT_MAP_INPUT=$m \
      "$bin" sort "$dir/rec.in" -o "$dir/out" --memory 5G --threads 2 --no-progress 2>&1 >/dev/null | tail -1)
    echo "map-$m,$i,$t" >> "$csv"
  done
done
"$bin" valsort "$dir/out" >/dev/null
rm -f "$dir/out"
