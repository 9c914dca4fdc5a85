#!/bin/sh
# What loading a GPT-2-small-sized checkpoint costs `gradformer generate`: the time to the first
# generated token, the time of each token after it, and the peak resident memory against the file.
# Runs 1 and N+1 tokens alternately, R times each, under /usr/bin/time -v; prints each run and the
# medians. per token = (median time of N+1 tokens - median time of 1) / N.
#
#   bench/load_measure.sh [BUILD_DIR] [CHECKPOINT] [R] [N]
# BUILD_DIR defaults to build; CHECKPOINT to /tmp/gpt2-small-random.safetensors, written with
# BUILD_DIR/bench/load_measure when missing.
set -eu
build=${1:-build}
checkpoint=${2:-/tmp/gpt2-small-random.safetensors}
runs=${3:-5}
more=${4:-16}
[ -f "$checkpoint" ] || "$build/bench/load_measure" "$checkpoint"
size=$(stat -c %s "$checkpoint")
one() {  # $1: tokens -> "seconds peak_kB"
  /usr/bin/time -v "$build/transformer/gradformer" generate --checkpoint "$checkpoint" \
    --prompt "The meaning of life is" --max-tokens "$1" --seed 1 2>&1 >/dev/null |
    awk '/Elapsed \(wall clock\)/ {n = split($NF, t, ":"); s = t[n] + (n > 1 ? 60 * t[n - 1] : 0)}
         /Maximum resident set size/ {kb = $NF} END {print s, kb}'
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
first=""; later=""; peaks=""
i=0
while [ $i -lt "$runs" ]; do
  a=$(one 1); b=$(one $((more + 1)))
  echo "run $((i + 1)): 1 token ${a% *} s, ${a#* } kB; $((more + 1)) tokens ${b% *} s, ${b#* } kB"
  first="$first ${a% *}"; later="$later ${b% *}"; peaks="$peaks ${a#* } ${b#* }"
  i=$((i + 1))
done
t1=$(echo $first | tr ' ' '\n' | median)
tn=$(echo $later | tr ' ' '\n' | median)
peak=$(echo $peaks | tr ' ' '\n' | median)
awk -v t1="$t1" -v tn="$tn" -v n="$more" -v peak="$peak" -v size="$size" 'BEGIN {
  per = (tn - t1) / n
  printf "file %.1f MB; median of %s: first token %.2f s, each later token %.4f s (first / later = %.1f)\n",
    size / 1e6, "runs", t1, per, (per > 0 ? t1 / per : 0)
  printf "median peak resident %.1f MB = %.2f x the file\n", peak * 1024 / 1e6, peak * 1024 / size }'
