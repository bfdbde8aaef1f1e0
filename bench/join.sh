#!/usr/bin/env bash
# A DFSORT JOINKEYS job on two files, against the floor of reading both and writing the result.
#
# usage: bench/join.sh [RECORDS] [RUNS] [SCRATCH_DIR]
#   RECORDS      100-byte records per file (default 20000000 = 2 GB each; a small count to try
#                the script out)
#   RUNS         runs per measurement (default 3; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY=5G    environment: --memory of the job, shared by the two sides' sorts (and their
#                threads); each side's plan takes one pass or two by its estimates
#   NO_DROP=1    environment: smoke run, the page cache is not dropped and the floor not
#                measured (bench/lib.sh); the times mean nothing
#
# F1 is gensort records 0 to RECORDS-1, F2 records RECORDS/2 to RECORDS*3/2-1: gensort's record
# i is the same in both, so half of each file pairs with the other. The job (target <= 2.0 x
# floor), each file sorted by oxsort on its 10-byte key, a full outer join:
#   JOINKEYS FILE=F1,FIELDS=(1,10,A)   JOINKEYS FILE=F2,FIELDS=(1,10,A)
#   JOIN UNPAIRED,F1,F2   REFORMAT FIELDS=(F1:1,50,F2:51,49,?),FILL=C'*'   OPTION COPY
# giving RECORDS*3/2 joined 100-byte records. The floor: iofloor's read_s of F1 plus read_s of
# F2 plus write_s of the joined output's size (iofloor on the output of the last run).
# Every run starts with the page cache dropped (run as root). Each output is checked: its size,
# and its indicators (byte 100): B for the RECORDS/2 paired records, 1 and 2 for the others.
# Raw rows go to bench/runs/<date>/join.csv; medians and ratios are appended to summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-20000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-5G}
. "$top/bench/lib.sh"
bench_prologue join "timestamp,case,variant,records_per_file,joined_records,memory,threads,run,seconds,peak_rss_kb,floor_s"
f1=$scratch/join.f1
f2=$scratch/join.f2
o=$scratch/join.out
ctl=$scratch/join.ctl
rm -f "$f1" "$f2" "$o"
joined=$((records + records - records / 2))
need=$(((records * 2 + joined) * 100 * 2 + (1 << 30)))
[ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt "$need" ] || { echo "not enough space in $scratch" >&2; exit 1; }
"$bin/oxsort" gen --records "$records" --quiet "$f1"
"$bin/oxsort" gen --records "$records" --start $((records / 2)) --quiet "$f2"
cat > "$ctl" <<'EOF'
* a full outer join of two files on their 10-byte keys; the main task copies
 JOINKEYS FILE=F1,FIELDS=(1,10,A)
 JOINKEYS FILE=F2,FIELDS=(1,10,A)
 JOIN UNPAIRED,F1,F2
 REFORMAT FIELDS=(F1:1,50,F2:51,49,?),FILL=C'*'
 OPTION COPY
EOF

# measure VARIANT: RUNS timed joins; prints "median [runs] peak_rss"
measure() {
  local variant=$1 times=() rss=() s m i
  for ((i = 1; i <= runs; i++)); do
    rm -f "$o"
    read -r s m c < <(timed_variant "$variant" "$bin/oxsort" sort -o "$o" --memory "$memory" \
      --no-progress --control "$ctl" --dd "SORTJNF1=$f1" --dd "SORTJNF2=$f2" --lrecl SORTJNF1=100 \
      --lrecl SORTJNF2=100 --temp-dir "$scratch")
    check_join
    times+=("$s"); rss+=("$m")
    echo "$(date -Iseconds),joinkeys-full-outer,$variant,$records,$joined,$memory,$threads,$i,$s,$m,$floor" >> "$csv"
  done
  local all
  all=$(IFS=,; echo "${times[*]}")
  echo "$(printf '%s\n' "${times[@]}" | median) [$all] $(printf '%s\n' "${rss[@]}" | sort -g | tail -1)"
}

# The output has RECORDS*3/2 records: B in byte 100 for the RECORDS/2 paired ones, 1 for the
# F1 records without a pair, 2 for the F2 ones (the indicators taken out by oxsort, untimed).
check_join() {
  [ "$(stat -c %s "$o")" = $((joined * 100)) ] || { echo "WRONG SIZE $o: $(stat -c %s "$o")" >&2; exit 1; }
  printf ' OPTION COPY\n OUTREC BUILD=(100,1)\n' > "$ctl.ind"
  "$bin/oxsort" sort -q "$o" -o "$o.ind" --record-size 100 --memory "$memory" --no-progress --control "$ctl.ind"
  local counts
  counts="$(tr -cd B < "$o.ind" | wc -c) $(tr -cd 1 < "$o.ind" | wc -c) $(tr -cd 2 < "$o.ind" | wc -c)"
  rm -f "$o.ind" "$ctl.ind"
  [ "$counts" = "$((records / 2)) $((records - records / 2)) $((records / 2))" ] \
    || { echo "WRONG INDICATORS (B 1 2): $counts" >&2; exit 1; }
}

# The floor: reading both files, writing the output (iofloor on a first, untimed run's output).
floor=0
"$bin/oxsort" sort -q -o "$o" --memory "$memory" --no-progress --control "$ctl" --dd "SORTJNF1=$f1" \
  --dd "SORTJNF2=$f2" --lrecl SORTJNF1=100 --lrecl SORTJNF2=100 --temp-dir "$scratch"
check_join
fl1=$(floor_json "$f1" "$scratch" "$runs")
fl2=$(floor_json "$f2" "$scratch" "$runs")
flo=$(floor_json "$o" "$scratch" "$runs")
floor=$(awk -v a="$(json_num read_s "$fl1")" -v b="$(json_num read_s "$fl2")" -v c="$(json_num write_s "$flo")" \
  'BEGIN{printf "%.3f", a+b+c}')
variants="fresh pool"
[ -n "${NO_DROP:-}" ] && variants=fresh # a smoke run leaves the machine's hugetlb pool alone
for variant in $variants; do
  [ "$variant" = pool ] && pool_reserve "$memory"
  read -r med all rss < <(measure "$variant")
  [ "$variant" = pool ] && pool_release
  {
    echo "### JOINKEYS full outer join: 2 x $records records -> $joined, --memory $memory, $variant memory ($(date -Iseconds))"
    echo
    echo "- floor $floor s: read F1 $(json_num read_s "$fl1") s + read F2 $(json_num read_s "$fl2") s + write the output $(json_num write_s "$flo") s (iofloor, medians of $runs)"
    echo "- oxsort: median $med s over runs $all; peak memory max $((rss / 1024)) MiB; **$(ratio "$med" "$floor") x floor** (target <= 2.0)"
    echo
  } | tee -a "$summary"
done
rm -f "$f1" "$f2" "$o" "$ctl"; sync
