#!/usr/bin/env bash
# pool1st.sh CSV DIR: the first and second one-pass sort after a hugetlb pool of 1600M is
# reserved cold (echo N > nr_hugepages) and warm (oxsort pool 1600M), new build both.
csv=$1; dir=$2
for how in cold warm; do
  if [ $how = cold ]; then echo 800 > /proc/sys/vm/nr_hugepages; b=new; else ./oxsort.new pool 1600M >&2; b=new; fi
  for i in 1 2; do
    rm -f "$dir/out"; sync; echo 3 > /proc/sys/vm/drop_caches
    t=$(/usr/bin/time -f '%e,%U,%S,%R' ./oxsort.$b sort "$dir/rec.in" -o "$dir/out" --memory 1500M --no-progress 2>&1 >/dev/null | tail -1)
    echo "pool-$how,$b,$i,$t" >> "$csv"
  done
  echo 0 > /proc/sys/vm/nr_hugepages
  sleep 5   # let the host take the released pages back before the next reservation
done
rm -f "$dir/out"
