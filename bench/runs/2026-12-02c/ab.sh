#!/usr/bin/env bash
# Before/after on tmpfs (no disk): the build before this session's changes (OLD) against the
# tip (NEW), alternated, RUNS times each, one-pass sorts of 4e7 records from a hugetlb pool,
# plain and with the typed key. Run as root: bench/runs/2026-12-02c/ab.sh OLD NEW [RUNS]
# AB_DIR (environment): where ab.csv goes (default: beside this script).
set -euo pipefail
cd "${AB_DIR:-$(dirname "$0")}"
old=$1 new=$2 runs=${3:-5}
csv=ab.csv
ctl=/dev/shm/typed.ctl
printf ' SORT FIELDS=(11,4,BI,D,21,8,FI,A,1,10,CH,A)\n' > "$ctl"
"$new" gen --records 40000000 --quiet /dev/shm/in
"$new" pool 5G >&2
echo "timestamp,case,build,run,wall_s,user_s,sys_s" > "$csv"
for i in $(seq "$runs"); do
  for case in plain typed; do
    extra=(); [ $case = typed ] && extra=(--control "$ctl")
    for b in old new; do
      bin=$old; [ $b = new ] && bin=$new
      rm -f /dev/shm/out
      /usr/bin/time -f "%e,%U,%S" -o /tmp/ab.tm "$bin" sort -q /dev/shm/in -o /dev/shm/out --memory 5G --no-progress "${extra[@]}"
      echo "$(date -Iseconds),$case,$b,$i,$(tail -1 /tmp/ab.tm)" >> "$csv"
    done
  done
done
"$new" pool off >&2
rm -f /dev/shm/in /dev/shm/out "$ctl"
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for case in ("plain", "typed"):
    for b in ("old", "new"):
        r = [x for x in rows if x["case"] == case and x["build"] == b]
        u = statistics.median(float(x["user_s"]) for x in r)
        s = statistics.median(float(x["sys_s"]) for x in r)
        w = statistics.median(float(x["wall_s"]) for x in r)
        print(f"{case:5} {b}: wall {w:.2f} s, user {u:.2f} s ({u/4:.2f} per GB), sys {s:.2f} s, n={len(r)}")
PY
