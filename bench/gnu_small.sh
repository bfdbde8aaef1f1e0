#!/usr/bin/env bash
# The `sort` link's small calls against GNU sort, as scripts make them: a loop of CALLS calls
# on a 3-line file, on a 100-line file and on 2 lines from a pipe (`printf 'b\na\n' | sort`),
# and the 1 MB and 100 MB files (CALLS/10 calls of the 1 MB one per run, one call of the
# 100 MB one), each paired with GNU sort in the same run (oxsort first, then GNU, run after
# run). Both run in the C locale (or LOCALE's) with their defaults (no -S, no --parallel).
#
# usage: bench/gnu_small.sh [RUNS] [CALLS] [SCRATCH_DIR]
#   RUNS         runs per case and tool (default 5; medians reported)
#   CALLS        calls per loop (default 1000)
#   SCRATCH_DIR  where the inputs go (default bench/scratch)
#   OUT=DIR      environment: where the CSV and summary go (default bench/runs/<date>)
#   CASES="small3 small100 pipe2 text1M text100M"  environment: the cases to run
#   LOCALE=en_US.UTF-8  environment: the locale both run in (default C)
#
# Per run: the loop's wall time, and its user and system CPU seconds (of the loop's shell too,
# the same for both tools); per tool and case, the peak RSS of one call (/usr/bin/time -f %M,
# the largest of 5 calls). Targets (issue 24): loops of small calls <= 2.0x GNU's wall time,
# peak memory <= 8 MiB; the 1 MB and 100 MB files never slower than GNU. Outputs are compared
# with GNU's byte for byte first.
# Raw rows go to OUT/gnu_small.csv; medians and ratios to OUT/gnu_small.md (gnu_small_LOCALE.*
# with LOCALE).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
calls=${2:-1000}
scratch=${3:-$top/bench/scratch}
out=${OUT:-$top/bench/runs/$(date +%Y-%m-%d)}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
/usr/bin/sort --version | grep -q "GNU coreutils" || { echo "/usr/bin/sort is not GNU sort" >&2; exit 1; }
cargo build --release --manifest-path "$top/Cargo.toml" -p oxsort-cli >&2
mkdir -p "$top/target/gnu" "$scratch" "$out"
ln -sf ../release/oxsort "$top/target/gnu/sort"
ours=$top/target/gnu/sort
gnu=/usr/bin/sort
export LC_ALL=${LOCALE:-C}
csv=$out/gnu_small${LOCALE:+_$LOCALE}.csv
[ -f "$csv" ] || echo "timestamp,case,tool,calls,run,seconds,ms_per_call,user_s,sys_s,peak_rss_kb" > "$csv"
md=$out/gnu_small${LOCALE:+_$LOCALE}.md

# Inputs: random printable lines of 10-200 bytes (a fixed seed), and the small files.
gen() {
  python3 - "$1" "$2" <<'EOF'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
r = random.Random(24)
chars = [chr(c) for c in range(33, 127)]
with open(path, "w") as f:
    size = 0
    while size < n:
        line = "".join(r.choices(chars, k=r.randint(10, 200))) + "\n"
        f.write(line)
        size += len(line)
EOF
}
printf 'c\nb\na\n' > "$scratch/small3.txt"
python3 -c "
import random
r = random.Random(100)
print('\n'.join(''.join(r.choices('abcdefghij0123456789 ', k=r.randint(5, 40))) for _ in range(100)))
" > "$scratch/small100.txt"
[ -f "$scratch/text1M.txt" ] || gen 1000000 "$scratch/text1M.txt"
[ -f "$scratch/text100M.txt" ] || gen 100000000 "$scratch/text100M.txt"

# The same output from both first.
for f in small3 small100 text1M text100M; do
  cmp -s <("$ours" "$scratch/$f.txt") <("$gnu" "$scratch/$f.txt") || { echo "outputs differ on $f" >&2; exit 1; }
done
cmp -s <(printf 'b\na\n' | "$ours") <(printf 'b\na\n' | "$gnu") || { echo "outputs differ on the pipe" >&2; exit 1; }

# loop TOOL CASE N: runs N calls of TOOL on CASE; prints "seconds user_s sys_s".
loop() {
  local tool=$1 case=$2 n=$3 log=$scratch/time.$$
  case $case in
    pipe2) /usr/bin/time -f "%e %U %S" -o "$log" bash -c 'for ((i = 0; i < $2; i++)); do printf "b\na\n" | "$1" >/dev/null; done' _ "$tool" "$n" ;;
    *) /usr/bin/time -f "%e %U %S" -o "$log" bash -c 'for ((i = 0; i < $3; i++)); do "$1" "$2" >/dev/null; done' _ "$tool" "$scratch/$case.txt" "$n" ;;
  esac
  [ -s "$log" ] || { echo "no timing for $tool on $case" >&2; exit 1; }
  tail -1 "$log"
  rm -f "$log"
}
# peak TOOL CASE: the largest peak RSS (KB) of 5 single calls.
peak() {
  local tool=$1 case=$2 m=0 k
  for _ in 1 2 3 4 5; do
    if [ "$case" = pipe2 ]; then
      k=$(printf 'b\na\n' | /usr/bin/time -f %M "$tool" 2>&1 >/dev/null)
    else
      k=$( { /usr/bin/time -f %M "$tool" "$scratch/$case.txt" >/dev/null; } 2>&1 )
    fi
    [ "$k" -gt "$m" ] && m=$k
  done
  echo "$m"
}

echo "uptime: $(uptime)" >&2
{
  echo "# The sort link's small calls against GNU sort ($(date -u +%FT%TZ))"
  echo
  echo "LC_ALL=$LC_ALL; uptime at start: $(uptime)"
  echo
  echo "| case | calls | oxsort s | GNU s | ratio | oxsort ms/call | GNU ms/call | oxsort CPU s | GNU CPU s | oxsort peak KB | GNU peak KB |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
} > "$md"
for case in ${CASES:-small3 small100 pipe2 text1M text100M}; do
  case $case in
    text1M) n=$((calls / 10)) ;;
    text100M) n=1 ;;
    *) n=$calls ;;
  esac
  declare -A secs=() cpu=() rss=()
  for tool in ours gnu; do rss[$tool]=$(peak "${!tool}" "$case"); done
  for run in $(seq "$runs"); do
    for tool in ours gnu; do
      read -r s u y < <(loop "${!tool}" "$case" "$n")
      echo "$(date -u +%FT%TZ),$case,$tool,$n,$run,$s,$(awk -v s="$s" -v n="$n" 'BEGIN{printf "%.3f", s * 1000 / n}'),$u,$y,${rss[$tool]}" >> "$csv"
      secs[$tool]+="$s "
      cpu[$tool]+="$(awk -v u="$u" -v y="$y" 'BEGIN{print u + y}') "
    done
  done
  med() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
  so=$(echo "${secs[ours]}" | med); sg=$(echo "${secs[gnu]}" | med)
  co=$(echo "${cpu[ours]}" | med); cg=$(echo "${cpu[gnu]}" | med)
  awk -v c="$case" -v n="$n" -v so="$so" -v sg="$sg" -v co="$co" -v cg="$cg" -v ro="${rss[ours]}" -v rg="${rss[gnu]}" \
    'BEGIN{printf "| %s | %d | %.3f | %.3f | %.2fx | %.3f | %.3f | %.2f | %.2f | %d | %d |\n", c, n, so, sg, so / sg, so * 1000 / n, sg * 1000 / n, co, cg, ro, rg}' >> "$md"
  unset secs cpu rss
done
{
  echo
  echo "Medians of $runs runs; ratio = oxsort's wall time over GNU's. CPU = user + system seconds of"
  echo "the loop (its shell's included, alike for both). Peak = the largest RSS of 5 single calls."
  echo "uptime at end: $(uptime)"
} >> "$md"
cat "$md"
