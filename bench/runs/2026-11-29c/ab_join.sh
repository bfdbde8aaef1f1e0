#!/usr/bin/env bash
# A/B of the GCSORT JOINKEYS job of bench/gcsort_join.sh: two builds, alternated, cache dropped,
# fresh memory, 8 s rest before each run. usage: ab_join.sh RUNS A_BIN B_BIN DIR
# Superseded by bench/ab.sh (CASES=join REST=8, the --control door of the same join: CPU
# seconds beside the wall time); kept as the script these rows were measured with.
set -euo pipefail
runs=$1 a=$2 b=$3 d=$4
take=$d/gcjoin.prm
cat > "$take" <<'T'
 JOINKEYS FILES = F1 , FIELDS=(1,10,A)
 JOINKEYS FILES=F2,
          FIELDS=(1,10,A)
 JOIN UNPAIRED , F1 , F2
 REFORMAT FIELDS=(F1:1,50,
                  F2:51,49,?)
          ,FILL=C'*'
 SORT FIELDS=COPY
 USE  dd_f1  ORG SQ RECORD F,100
 USE  dd_f2  ORG SQ RECORD F,100
 GIVE dd_out ORG SQ RECORD F,100
T
echo "build,run,seconds,cpu_s,peak_kb"
for ((i = 1; i <= runs; i++)); do
  order="A B"; [ $((i % 2)) = 0 ] && order="B A"
  for which in $order; do
    bin=$a; [ "$which" = B ] && bin=$b
    rm -f "$d/gcjoin.out"; sync; echo 3 > /proc/sys/vm/drop_caches; sleep 8
    /usr/bin/time -f "%e %U %S %M" -o "$d/time.txt" env dd_f1="$d/gcjoin.f1" dd_f2="$d/gcjoin.f2" \
      dd_out="$d/gcjoin.out" GCSORT_MEMSIZE=5G GCSORT_PATHTMP="$d" "$bin" gcsort -q TAKE "$take" > /dev/null
    read -r e u s m < "$d/time.txt"
    sum=$(md5sum < "$d/gcjoin.out" | cut -c1-12)
    echo "$which,$i,$e,$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}'),$m,$sum"
  done
done
