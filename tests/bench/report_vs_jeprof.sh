#!/usr/bin/env bash
# `memprofctl report` vs jeprof (the anchor for analysis, docs/contract.md section 5) on a
# large realistic heap profile, side by side in one run on the same machine.
#
# The dump: Debian's clang-14 (a big C++ program: the driver plus
# libclang-cpp.so.14 and libLLVM-14.so.1) compiling, with -O2 -g, a C++20
# translation unit that includes the whole standard library and instantiates
# a few hundred templates, under LD_PRELOAD jemalloc with every allocation
# of 32 bytes or more sampled (lg_prof_sample:5) and a final dump at exit
# (prof_final). The script checks the dump has at least 20,000 stacks.
#
# Then: the Total line and the top 10 functions of both tools on that dump,
# hyperfine timings of --format text|collapsed|svg against jeprof --text,
# --collapsed and --svg, and the peak RSS of each (GNU time %M: the largest
# single process, for jeprof usually perl itself, not the sum with its
# nm/addr2line/objdump/dot children).
#
#   tests/bench/report_vs_jeprof.sh [BUILD_DIR]
#
# Needs hyperfine, jeprof (libjemalloc-dev), libjemalloc2, clang-14 and GNU
# time. Benchmark-only dependency: graphviz (`apt-get install -y graphviz`),
# whose `dot` jeprof --svg runs; without it the script times jeprof --dot
# instead and says so. Prints Markdown.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
ctl=$build/cli/memprofctl
readonly LG_SAMPLE=${MEMPROF_BENCH_LG_SAMPLE:-5}
readonly MIN_STACKS=20000
readonly OUR_RUNS=${MEMPROF_BENCH_OUR_RUNS:-5}
readonly JEPROF_RUNS=${MEMPROF_BENCH_JEPROF_RUNS:-3}

for tool in hyperfine jeprof clang++-14 jq /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "report_vs_jeprof.sh: $tool is not installed" >&2; exit 1; }
done
# awk reads to the end: an early exit would SIGPIPE ldconfig and, under
# pipefail, end the script silently.
jemalloc=$(/sbin/ldconfig -p | awk '/libjemalloc.so.2 / && !found {print $NF; found = 1}')
[ -n "$jemalloc" ] || { echo "report_vs_jeprof.sh: libjemalloc.so.2 not found by ldconfig" >&2; exit 1; }
svg_flag=--svg
command -v dot >/dev/null || { svg_flag=--dot; echo "NOTE: graphviz's dot is missing: timing jeprof --dot instead of --svg"; echo; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- The dump -----------------------------------------------------------------
binary=$(readlink -f "$(command -v clang++-14)")
LD_PRELOAD=$jemalloc \
  MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:$LG_SAMPLE,prof_final:true,prof_prefix:$work/big \
  clang++-14 -std=c++20 -O2 -g -c "$(dirname "$0")/data/big.cc" -o "$work/big.o"
dump=$(ls -S "$work"/big.*.heap | head -n 1)  # clang runs cc1 in-process: one dump
# jeprof is given the binary that ran; memprofctl reads it from the dump's maps.
mapped=$(awk '/^MAPPED_LIBRARIES:/{m=1; next} m && $2 ~ /x/ && $6 != "" {print $6; exit}' "$dump")
[ "$mapped" = "$binary" ] || { echo "report_vs_jeprof.sh: dump maps $mapped, not $binary" >&2; exit 1; }
stacks=$(grep -c '^@' "$dump")
[ "$stacks" -ge "$MIN_STACKS" ] || { echo "report_vs_jeprof.sh: only $stacks stacks (< $MIN_STACKS)" >&2; exit 1; }
echo "### The dump"
echo
# Frames per stack, sorted, and the distinct PCs (POSIX awk: Debian's is mawk).
grep '^@' "$dump" | awk '{print NF - 1}' | sort -n >"$work/frames"
pcs=$(grep '^@' "$dump" | tr ' ' '\n' | grep -v '^@' | sort -u | wc -l)
echo "$binary (clang++-14 -std=c++20 -O2 -g -c big.cc), MALLOC_CONF lg_prof_sample:$LG_SAMPLE, prof_final"
echo
echo "| stacks | distinct PCs | size | frames per stack (min / median / mean / max) |"
echo "|---|---|---|---|"
awk -v stacks="$stacks" -v pcs="$pcs" -v size="$(stat -c %s "$dump")" '
  { f[NR] = $1; sum += $1 }
  END { printf "| %d | %d | %.1f MiB | %d / %d / %.1f / %d |\n\n", stacks, pcs, size / 1048576,
          f[1], f[int((NR + 1) / 2)], sum / NR, f[NR] }' "$work/frames"

# --- Correctness: Total and top 10 --------------------------------------------
"$ctl" report "$dump" --format text --top 10 -o "$work/ours.txt"
jeprof --text "$binary" "$dump" >"$work/jeprof.txt" 2>"$work/jeprof.err"
top10() { awk '/^Total:/{next} NF >= 6 {$1=$2=$3=$4=$5=""; sub(/^ +/, ""); sub(/@@.*$/, ""); print}' "$1" | head -n 10; }
echo "### Correctness"
echo
echo "| | memprofctl | jeprof |"
echo "|---|---|---|"
echo "| Total | $(grep '^Total:' "$work/ours.txt") | $(grep '^Total:' "$work/jeprof.txt") |"
paste -d '\t' <(top10 "$work/ours.txt") <(top10 "$work/jeprof.txt") |
  awk -F'\t' '{printf "| #%d | `%s` | `%s` |\n", NR, $1, $2}'
echo
if [ "$(grep '^Total:' "$work/ours.txt")" = "$(grep '^Total:' "$work/jeprof.txt")" ]; then
  echo "Total: equal."
else
  echo "Total: DIFFERENT."
fi
if diff -q <(top10 "$work/ours.txt") <(top10 "$work/jeprof.txt") >/dev/null; then
  echo "Top 10 (jeprof's @@VERSION suffixes dropped): equal."
else
  echo "Top 10 (jeprof's @@VERSION suffixes dropped): DIFFERENT, see the table."
fi
echo

# --- Timings ------------------------------------------------------------------
echo "### Time (memprofctl: --warmup 1 --runs $OUR_RUNS; jeprof: --runs $JEPROF_RUNS, back to back)"
echo
hyperfine -N --warmup 1 --runs "$OUR_RUNS" --export-json "$work/ours.json" --export-markdown "$work/ours.md" \
  -n "memprofctl report --format text" "$ctl report $dump --format text -o -" \
  -n "memprofctl report --format collapsed" "$ctl report $dump --format collapsed -o -" \
  -n "memprofctl report --format svg" "$ctl report $dump --format svg -o -" >/dev/null
hyperfine -N --runs "$JEPROF_RUNS" --export-json "$work/jeprof.json" --export-markdown "$work/jeprof.md" \
  -n "jeprof --text" "jeprof --text $binary $dump" \
  -n "jeprof --collapsed" "jeprof --collapsed $binary $dump" \
  -n "jeprof $svg_flag" "jeprof $svg_flag $binary $dump" >/dev/null
cat "$work/ours.md"; tail -n 3 "$work/jeprof.md"; echo

# --- Peak RSS -----------------------------------------------------------------
rss() { /usr/bin/time -f %M -o "$work/rss" "$@" >/dev/null 2>&1; echo "$(( $(cat "$work/rss") / 1024 )) MiB"; }
echo "### Speedup and peak RSS"
echo
echo "| format | memprofctl mean | jeprof mean | speedup | memprofctl peak RSS | jeprof peak RSS |"
echo "|---|---|---|---|---|---|"
for i in 0 1 2; do
  format=$(echo text collapsed svg | cut -d' ' -f$((i + 1)))
  jflag=$(echo --text --collapsed $svg_flag | cut -d' ' -f$((i + 1)))
  ours=$(jq ".results[$i].mean" "$work/ours.json")
  theirs=$(jq ".results[$i].mean" "$work/jeprof.json")
  printf '| %s vs %s | %.2f s | %.2f s | %.1fx | %s | %s |\n' "$format" "$jflag" "$ours" "$theirs" \
    "$(jq -n "$theirs / $ours")" \
    "$(rss "$ctl" report "$dump" --format "$format" -o "$work/out.$format")" \
    "$(rss jeprof "$jflag" "$binary" "$dump")"
done
