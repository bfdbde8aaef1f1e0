#!/usr/bin/env bash
# The cost of `oxsort sort --timeline`: the same sort with and without it, measured in one
# session, runs alternating so drift in the machine hits both alike.
#
# usage: bench/timeline.sh [RECORDS] [RUNS] [SCRATCH_DIR]
#   RECORDS      gensort records (default 40000000 = 4 GB; a small count to try the script out)
#   RUNS         runs of each (default 5; medians reported)
#   SCRATCH_DIR  where data goes (default bench/scratch)
#   MEMORY=5G    environment: --memory of every sort (5G keeps 4e7 records in one pass)
#   VARIANT=pool environment: `pool` (a hugetlb pool of MEMORY, touched once: steadier times
#                on VMs that hand freed memory back to the host) or `fresh`
#
# Target: median with --timeline <= 1.01 x median without. Wall times on a shared machine vary
# by more than that, so the script also reports the ratio of the fastest runs and, measured
# directly, the sampler thread's own CPU time (its `timeline_*` columns in the CSV it writes)
# as a share of the sort's CPU time. Every output is checked with valsort; every timeline must
# hold a sample per 100 ms of the sort. Raw rows go to bench/runs/<date>/timeline.csv; medians
# and ratios are appended to summary.md there.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
records=${1:-40000000}
runs=${2:-5}
scratch=${3:-$top/bench/scratch}
memory=${MEMORY:-5G}
variant=${VARIANT:-pool}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }

cargo build --release --manifest-path "$top/Cargo.toml" -p oxsort-cli >&2
bin=$top/target/release
mkdir -p "$scratch"
day=$(date +%Y-%m-%d)
out=$top/bench/runs/$day
mkdir -p "$out"
csv=$out/timeline.csv
[ -f "$csv" ] || echo "timestamp,case,records,bytes,memory,variant,run,seconds,peak_rss_kb,samples,sampler_cpu_s,sort_cpu_s" > "$csv"
summary=$out/summary.md

. "$top/bench/lib.sh"
in=$scratch/timeline-in.dat
o=$scratch/timeline-out.dat
tl=$scratch/timeline.csv
trap 'rm -f "$in" "$o" "$tl"; [ "$variant" = pool ] && pool_release || true' EXIT
"$bin/oxsort" gen --records "$records" "$in"
sum=$({ "$bin/oxsort" valsort --json "$in" || true; } | sed 's/.*"checksum":"\([0-9a-f]*\)".*/\1/')
if [ "$variant" = pool ]; then pool_reserve "$memory"; fi

plain=(); with=(); scpus=(); tcpus=()
for ((i = 1; i <= runs; i++)); do
  for case in plain timeline; do
    rm -f "$o" "$tl"
    extra=()
    [ "$case" = timeline ] && extra=(--timeline "$tl")
    read -r s m c < <(timed_variant "$variant" "$bin/oxsort" sort "$in" -o "$o" --memory "$memory" --no-progress "${extra[@]}")
    check_output "$o" "$sum" sorted
    samples=0 scpu= tcpu=
    if [ "$case" = timeline ]; then
      read -r scpu tcpu < <(awk -F, 'NR==1{for(i=1;i<=NF;i++){if($i~/^timeline_/)t[i]=1; if($i=="cpu_user_s"||$i=="cpu_sys_s")c[i]=1}; next}
        {for(i in t)s+=$i; for(i in c)a+=$i} END{printf "%.2f %.2f\n", s, a}' "$tl")
      scpus+=("$scpu"); tcpus+=("$tcpu")
      samples=$(($(wc -l < "$tl") - 1))
      # One sample per 100 ms of the sort, give or take the first and the last.
      awk -v n="$samples" -v s="$s" 'BEGIN{exit !(n >= s * 10 - 3)}' || { echo "only $samples samples in $s s" >&2; exit 1; }
      with+=("$s")
    else
      plain+=("$s")
    fi
    echo "$(date -Iseconds),$case,$records,$((records * 100)),$memory,$variant,$i,$s,$m,$samples,$scpu,$tcpu" >> "$csv"
    echo "  $case run $i: $s s" >&2
  done
done
mp=$(printf '%s\n' "${plain[@]}" | median)
mw=$(printf '%s\n' "${with[@]}" | median)
ratio=$(awk -v a="$mw" -v b="$mp" 'BEGIN{printf "%.4f", a/b}')
minp=$(printf '%s\n' "${plain[@]}" | sort -g | head -1)
minw=$(printf '%s\n' "${with[@]}" | sort -g | head -1)
minratio=$(awk -v a="$minw" -v b="$minp" 'BEGIN{printf "%.4f", a/b}')
share=$(awk -v s="${scpus[*]}" -v t="${tcpus[*]}" 'BEGIN{n=split(s,a," "); split(t,b," "); for(i=1;i<=n;i++){x+=a[i]; y+=b[i]}; printf "%.3f", 100*x/y}')
{
  echo
  echo "## timeline overhead, $records records, --memory $memory, $variant memory ($(date -Iseconds))"
  echo
  echo "uptime: $(uptime)"
  echo
  echo "| case | median s | runs |"
  echo "|---|---:|---|"
  echo "| oxsort sort | $mp | ${plain[*]} |"
  echo "| oxsort sort --timeline | $mw | ${with[*]} |"
  echo
  echo "ratio with/without: **$ratio** of medians (target <= 1.01), $minratio of the fastest runs;"
  echo "the sampler's own CPU: ${scpus[*]} s against ${tcpus[*]} s of the sorts' CPU, **$share%**"
} | tee -a "$summary"
