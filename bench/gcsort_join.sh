#!/usr/bin/env bash
# A GCSORT JOINKEYS job (`oxsort gcsort TAKE file`: two USE files, one GIVE) on two files,
# against the floor of reading both and writing the result, and against the same join run by
# `oxsort sort --control` (the DFSORT door over the one job layer).
#
# usage: bench/gcsort_join.sh [RECORDS] [RUNS] [SCRATCH_DIR]
#   RECORDS      100-byte records per file (default 20000000 = 2 GB each; a small count to try
#                the script out)
#   RUNS         runs per measurement (default 3; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY=5G    environment: the job's memory (GCSORT_MEMSIZE for gcsort, --memory for sort)
#   NO_DROP=1    environment: smoke run, the page cache is not dropped and the floor not
#                measured (bench/lib.sh); the times mean nothing
#
# F1 is gensort records 0 to RECORDS-1, F2 records RECORDS/2 to RECORDS*3/2-1, so half of each
# file pairs with the other. The take file is GCSORT's free form (continuation lines, blanks
# around = and ,, USE and GIVE after the statements, names through environment variables):
#   JOINKEYS FILES=F1,FIELDS=(1,10,A)   JOINKEYS FILES=F2,FIELDS=(1,10,A)
#   JOIN UNPAIRED,F1,F2   REFORMAT FIELDS=(F1:1,50,F2:51,49,?),FILL=C'*'   SORT FIELDS=COPY
#   USE dd_f1 ORG SQ RECORD F,100   USE dd_f2 ORG SQ RECORD F,100   GIVE dd_out ORG SQ RECORD F,100
# giving RECORDS*3/2 joined 100-byte records (target <= 2.0 x floor). The floor: iofloor's
# read_s of F1 plus read_s of F2 plus write_s of the joined output's size. Every run starts
# with the page cache dropped (run as root). Each output is checked: its size, its indicators
# (byte 100: B for the RECORDS/2 paired records, 1 and 2 for the others), and gcsort's output
# is byte for byte sort's. The two doors take turns run by run (the same program does the same
# work behind both: one plan, one pass, the same bytes read and written), so that a difference
# between them is not the order they ran in. Raw rows go to bench/runs/<date>/gcsort_join.csv;
# medians and ratios are appended to summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-20000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-5G}
. "$top/bench/lib.sh"
bench_prologue gcsort_join "timestamp,case,door,records_per_file,joined_records,memory,threads,run,seconds,peak_rss_kb,cpu_s,floor_s"
f1=$scratch/gcjoin.f1
f2=$scratch/gcjoin.f2
o=$scratch/gcjoin.out
ref=$scratch/gcjoin.ref
take=$scratch/gcjoin.prm
ctl=$scratch/gcjoin.ctl
rm -f "$f1" "$f2" "$o" "$ref"
joined=$((records + records - records / 2))
need=$(((records * 2 + joined * 2) * 100 + (1 << 30)))
[ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt "$need" ] || { echo "not enough space in $scratch" >&2; exit 1; }
"$bin/oxsort" gen --records "$records" --quiet "$f1"
"$bin/oxsort" gen --records "$records" --start $((records / 2)) --quiet "$f2"
cat > "$take" <<'EOF'
* a full outer join of two files on their 10-byte keys, written as GCSORT jobs are
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
EOF
cat > "$ctl" <<'EOF'
 JOINKEYS FILE=F1,FIELDS=(1,10,A)
 JOINKEYS FILE=F2,FIELDS=(1,10,A)
 JOIN UNPAIRED,F1,F2
 REFORMAT FIELDS=(F1:1,50,F2:51,49,?),FILL=C'*'
 OPTION COPY
EOF

# run_door gcsort|sort OUT VARIANT: one timed join; prints "seconds peak_rss_kb cpu_seconds".
run_door() {
  local door=$1 out=$2 variant=$3
  if [ "$door" = gcsort ]; then
    timed_variant "$variant" env dd_f1="$f1" dd_f2="$f2" dd_out="$out" GCSORT_MEMSIZE="$memory" \
      GCSORT_PATHTMP="$scratch" "$bin/oxsort" gcsort -q TAKE "$take"
  else
    timed_variant "$variant" "$bin/oxsort" sort -q -o "$out" --memory "$memory" --no-progress \
      --control "$ctl" --dd "SORTJNF1=$f1" --dd "SORTJNF2=$f2" --lrecl SORTJNF1=100 \
      --lrecl SORTJNF2=100 --temp-dir "$scratch"
  fi
}

# The output has RECORDS*3/2 records: B in byte 100 for the RECORDS/2 paired ones, 1 for the
# F1 records without a pair, 2 for the F2 ones (the indicators taken out by oxsort, untimed).
check_join() {
  local out=$1
  [ "$(stat -c %s "$out")" = $((joined * 100)) ] || { echo "WRONG SIZE $out: $(stat -c %s "$out")" >&2; exit 1; }
  printf ' OPTION COPY\n OUTREC BUILD=(100,1)\n' > "$ctl.ind"
  "$bin/oxsort" sort -q "$out" -o "$out.ind" --record-size 100 --memory "$memory" --no-progress --control "$ctl.ind"
  local counts
  counts="$(tr -cd B < "$out.ind" | wc -c) $(tr -cd 1 < "$out.ind" | wc -c) $(tr -cd 2 < "$out.ind" | wc -c)"
  rm -f "$out.ind" "$ctl.ind"
  [ "$counts" = "$((records / 2)) $((records - records / 2)) $((records / 2))" ] \
    || { echo "WRONG INDICATORS (B 1 2): $counts" >&2; exit 1; }
}

# measure_both VARIANT: RUNS timed joins of each door, the doors taking turns (gcsort first on
# odd runs, sort first on even ones) so that neither always runs on the machine state the other
# left (page cache, memory just freed); prints
# "gcsort_median [runs] gcsort_peak_rss gcsort_cpu_median sort_median [runs] sort_peak_rss sort_cpu_median".
measure_both() {
  local variant=$1 i door out s m
  local gt=() gr=() gc=() st=() sr=() sc=()
  for ((i = 1; i <= runs; i++)); do
    local order="gcsort sort"
    [ $((i % 2)) = 0 ] && order="sort gcsort"
    for door in $order; do
      out=$o
      [ "$door" = sort ] && out=$ref
      rm -f "$out"
      read -r s m c < <(run_door "$door" "$out" "$variant")
      check_join "$out"
      if [ "$door" = gcsort ]; then gt+=("$s"); gr+=("$m"); gc+=("$c"); else st+=("$s"); sr+=("$m"); sc+=("$c"); fi
      echo "$(date -Iseconds),joinkeys-full-outer,$door-$variant,$records,$joined,$memory,$threads,$i,$s,$m,$c,$floor" >> "$csv"
    done
  done
  echo "$(printf '%s\n' "${gt[@]}" | median) [$(IFS=,; echo "${gt[*]}")] $(printf '%s\n' "${gr[@]}" | sort -g | tail -1)" \
    "$(printf '%s\n' "${gc[@]}" | median)" \
    "$(printf '%s\n' "${st[@]}" | median) [$(IFS=,; echo "${st[*]}")] $(printf '%s\n' "${sr[@]}" | sort -g | tail -1)" \
    "$(printf '%s\n' "${sc[@]}" | median)"
}

# CPU seconds per GB of input (both files).
cpu_per_gb() { per_gb $((2 * records * 100)) "$1"; }
# The floor: reading both files, writing the output (iofloor on a first, untimed run's output).
floor=0
run_door gcsort "$o" fresh > /dev/null
check_join "$o"
fl1=$(floor_json "$f1" "$scratch" "$runs")
fl2=$(floor_json "$f2" "$scratch" "$runs")
flo=$(floor_json "$o" "$scratch" "$runs")
floor=$(awk -v a="$(json_num read_s "$fl1")" -v b="$(json_num read_s "$fl2")" -v c="$(json_num write_s "$flo")" \
  'BEGIN{printf "%.3f", a+b+c}')
variants="fresh pool"
[ -n "${NO_DROP:-}" ] && variants=fresh # a smoke run leaves the machine's hugetlb pool alone
for variant in $variants; do
  [ "$variant" = pool ] && pool_reserve "$memory"
  read -r gmed gall grss gcpu smed sall srss scpu < <(measure_both "$variant")
  [ "$variant" = pool ] && pool_release
  cmp "$o" "$ref" || { echo "gcsort's output differs from sort's" >&2; exit 1; }
  {
    echo "### GCSORT JOINKEYS full outer join (oxsort gcsort TAKE): 2 x $records records -> $joined, memory $memory, $variant memory ($(date -Iseconds))"
    echo
    echo "- floor $floor s: read F1 $(json_num read_s "$fl1") s + read F2 $(json_num read_s "$fl2") s + write the output $(json_num write_s "$flo") s (iofloor, medians of $runs)"
    echo "- oxsort gcsort: median $gmed s over runs $gall; peak memory max $((grss / 1024)) MiB; **$(ratio "$gmed" "$floor") x floor** (target <= 2.0); $gcpu CPU-s = $(cpu_per_gb "$gcpu") CPU-s per GB of input"
    echo "- oxsort sort --control, the same join: median $smed s over runs $sall; peak memory max $((srss / 1024)) MiB; $(ratio "$smed" "$floor") x floor; $scpu CPU-s = $(cpu_per_gb "$scpu") CPU-s per GB of input"
    echo
  } | tee -a "$summary"
done
rm -f "$f1" "$f2" "$o" "$ref" "$take" "$ctl"; sync
