#!/bin/bash
# tmpfs to tmpfs (/dev/shm), one pass of 4e7 gensort records from a 5G hugetlb pool, two builds
# alternated: bench/runs/2026-11-30j/tmpfs-ab.sh BASE_BIN NEW_BIN [RUNS] > tmpfs-ab.csv
set -euo pipefail
base=$1 new=$2 runs=${3:-5}
$new gen --records 40000000 --quiet /dev/shm/in
$new pool 5G >&2
echo "timestamp,build,run,wall_s,user_s,sys_s,output_user_s,sort_user_s"
for i in $(seq "$runs"); do
  for b in base new; do
    bin=$base; [ $b = new ] && bin=$new
    rm -f /dev/shm/out
    /usr/bin/time -f "%e,%U,%S" -o /tmp/tm.txt "$bin" sort -q /dev/shm/in -o /dev/shm/out \
      --memory 5G --no-progress --stats=text 2> /tmp/st.txt
    o=$(awk '/thread output/{print $4}' /tmp/st.txt); s=$(awk '/thread sort/{print $4}' /tmp/st.txt)
    echo "$(date -Iseconds),$b,$i,$(tail -1 /tmp/tm.txt),$o,$s"
  done
done
$new valsort -q /dev/shm/out >&2 && echo "output sorted" >&2
$new pool off >&2
rm -f /dev/shm/in /dev/shm/out
