#!/bin/bash
# tmpfs to tmpfs (/dev/shm), one pass of 4e7 gensort records, builds alternated, each given as
# "BIN [ENV=VALUE]"; the pool (if any) is the caller's: `oxsort pool 5G` first for the pool rows.
# bench/runs/2026-12-01/tmpfs-ab.sh RUNS "BASE_BIN" "NEW_BIN" > tmpfs-ab.csv; medians: med.py tmpfs-ab.csv
# DIR (environment) another tmpfs to run in (say one mounted with huge=always); IN another input
# file there (say lines from gen_lines) and ARGS the sort's arguments for it (say --lines, or
# --control typed.ctl).
set -euo pipefail
dir=${DIR:-/dev/shm}
runs=$1; shift
vars=("$@")
in=${IN:-$dir/in}
[ -f "$in" ] || "${vars[0]%% *}" gen --records 40000000 --quiet "$in"
read -r -a args <<< "${ARGS:-}"
echo "timestamp,variant,run,wall_s,user_s,sys_s,output_user_s,sort_user_s"
for i in $(seq "$runs"); do for v in "${vars[@]}"; do
  bin=${v%% *}; e=X=1; [[ "$v" == *" "* ]] && e=${v#* }
  rm -f "$dir/out"
  env "$e" /usr/bin/time -f "%e,%U,%S" -o /tmp/tm.txt "$bin" sort -q "$in" -o "$dir/out" \
    "${args[@]}" --memory 5G --no-progress --stats=text 2> /tmp/st.txt
  o=$(awk '/thread output/{print $4}' /tmp/st.txt); s=$(awk '/thread sort/{print $4}' /tmp/st.txt)
  echo "$(date -Iseconds),$(basename "$bin")_$e,$i,$(tail -1 /tmp/tm.txt),$o,$s"
done; done
