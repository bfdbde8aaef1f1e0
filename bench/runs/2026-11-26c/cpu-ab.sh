#!/usr/bin/env bash
# ab.sh CSV RUNS VARIANT CASE...: interleaved base/new runs; rows build,variant,case,run,wall,user,sys
csv=$1; runs=$2; variant=$3; shift 3
for c in "$@"; do
  case $c in
    onepass) args="rec.in --memory 2G" ;;
    typed) args="rec.in --memory 2G --control typed.ctl" ;;
    lines) args="--lines lines.in --memory 2G" ;;
  esac
  for ((i = 1; i <= runs; i++)); do
    for b in base new; do
      rm -f ab.out
      if [ "$variant" = fresh ]; then e="env OXSORT_HUGETLB=off"; else e=env; fi
      t=$(/usr/bin/time -f '%e,%U,%S' $e ./oxsort.$b sort $args -o ab.out --no-progress 2>&1 >/dev/null | tail -1)
      echo "$b,$variant,$c,$i,$t" >> "$csv"
    done
  done
done
rm -f ab.out
