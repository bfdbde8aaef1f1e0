#!/usr/bin/env bash
# A DFSORT job as mainframe users write it, against the one-pass I/O floor, in one session.
#
# usage: bench/dfsort.sh [RECORDS] [RUNS] [SCRATCH_DIR]
#   RECORDS      100-byte records (default 40000000 = 4 GB; a small count to try the script out)
#   RUNS         runs per measurement (default 3; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY=5G    environment: --memory of every sort (5G keeps 4e7 records in one pass)
#   NO_DROP=1    environment: smoke run, the page cache is not dropped and the floor not
#                measured (bench/lib.sh); the times mean nothing
#
# The input, made untimed: gensort records with a real packed-decimal amount, by oxsort itself
# (INREC converts bytes 5-8 of the random key, binary, to an 8-byte PD field at 11-18):
#   INREC BUILD=(1,10,5,4,BI,TO=PD,LENGTH=8,13,32,51,50)  OPTION COPY
# The job timed (target <= 1.5 x floor1_s):
#   INREC  BUILD=(1,10,11,8,51,50,19,32)    reshaped before the sort (amount kept at 11-18)
#   SORT   FIELDS=(1,3,CH,A)                about 2.4 records per key: SUM has groups to add
#   SUM    FIELDS=(11,8,PD)
#   OUTFIL FNAMES=LOW,INCLUDE=(1,1,BI,LT,X'80')   two outputs in the same pass
#   OUTFIL FNAMES=HIGH,SAVE
# Every run starts with the page cache dropped (run as root). The floor is
# ../shared/tools/iofloor on the input. Each output is checked with oxsort valsort: sorted (one
# record per 3-byte key, so sorted by the 10-byte key too), and together as many records as the
# input has distinct 3-byte keys (counted once, untimed).
# Raw rows go to bench/runs/<date>/dfsort.csv; medians and ratios are appended to summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-40000000}
runs=${2:-3}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-5G}
. "$top/bench/lib.sh"
bench_prologue dfsort "timestamp,case,variant,records,bytes,memory,threads,run,seconds,peak_rss_kb,floor1_s"
row() { # variant run seconds rss
  echo "$(date -Iseconds),inrec-sort-sum-outfil,$1,$records,$((records * 100)),$memory,$threads,$2,$3,$4,$floor1" >> "$csv"
}

gen=$scratch/dfsort.gen
in=$scratch/dfsort.in
low=$scratch/dfsort.low
high=$scratch/dfsort.high
genctl=$scratch/dfsort-gen.ctl
ctl=$scratch/dfsort.ctl
rm -f "$gen" "$in" "$low" "$high"
need=$((records * 100 * 4 + (1 << 30)))
[ "$(df --output=avail -B1 "$scratch" | tail -1)" -gt "$need" ] || { echo "not enough space in $scratch" >&2; exit 1; }
"$bin/oxsort" gen --records "$records" --quiet "$gen"
printf '* a packed-decimal amount from 4 random key bytes\n INREC BUILD=(1,10,5,4,BI,TO=PD,LENGTH=8,13,32,51,50)\n OPTION COPY\n' > "$genctl"
"$bin/oxsort" sort -q "$gen" -o "$in" --record-size 100 --memory "$memory" --no-progress --control "$genctl"
rm -f "$gen"
cat > "$ctl" <<'EOF'
* a DFSORT user's job: reshape, sort on a short key, add the amounts, two outputs
 INREC  BUILD=(1,10,11,8,51,50,19,32)
 SORT   FIELDS=(1,3,CH,A)
 SUM    FIELDS=(11,8,PD)
 OUTFIL FNAMES=LOW,INCLUDE=(1,1,BI,LT,X'80')
 OUTFIL FNAMES=HIGH,SAVE
EOF
# The records SUM leaves: one per distinct 3-byte key (counted untimed, by oxsort).
groups=$("$bin/oxsort" sort -q "$in" -o - --record-size 100 --memory "$memory" --no-progress \
  --fields 1,3,CH,A --unique | wc -c)
groups=$((groups / 100))
floor=$(floor_json "$in" "$scratch" "$runs")
floor1=$(json_num floor1_s "$floor")

# measure VARIANT: RUNS timed jobs; prints "median [runs] peak_rss"
measure() {
  local variant=$1 times=() rss=() s m i n
  for ((i = 1; i <= runs; i++)); do
    rm -f "$low" "$high"
    # No -o: only the OUTFIL outputs are written (no OUTFIL names SORTOUT).
    read -r s m c < <(timed_variant "$variant" "$bin/oxsort" sort "$in" --record-size 100 \
      --memory "$memory" --no-progress --control "$ctl" --dd "LOW=$low" --dd "HIGH=$high")
    for f in "$low" "$high"; do
      "$bin/oxsort" valsort --json "$f" | grep -q '"ok":true' || { echo "NOT SORTED $f" >&2; exit 1; }
    done
    n=$(( ($(stat -c %s "$low") + $(stat -c %s "$high")) / 100 ))
    [ "$n" = "$groups" ] || { echo "WRONG RECORD COUNT: $n records written, $groups keys" >&2; exit 1; }
    times+=("$s"); rss+=("$m"); row "$variant" "$i" "$s" "$m"
  done
  local joined
  joined=$(IFS=,; echo "${times[*]}")
  echo "$(printf '%s\n' "${times[@]}" | median) [$joined] $(printf '%s\n' "${rss[@]}" | sort -g | tail -1)"
}

variants="fresh pool"
[ -n "${NO_DROP:-}" ] && variants=fresh # a smoke run leaves the machine's hugetlb pool alone
for variant in $variants; do
  [ "$variant" = pool ] && pool_reserve "$memory"
  read -r med all rss < <(measure "$variant")
  [ "$variant" = pool ] && pool_release
  {
    echo "### DFSORT job (INREC BUILD, SORT, SUM FIELDS=(11,8,PD), OUTFIL x2): $records records, --memory $memory, $variant memory ($(date -Iseconds))"
    echo
    echo "- I/O floor (iofloor, median of $runs): $floor"
    echo "- $groups records written (one per 3-byte key) to two OUTFIL outputs"
    echo "- oxsort: median $med s over runs $all; peak memory max $((rss / 1024)) MiB; **$(ratio "$med" "$floor1") x floor1** (target <= 1.5)"
    echo
  } | tee -a "$summary"
done
rm -f "$in" "$low" "$high" "$ctl" "$genctl"; sync
