#!/usr/bin/env bash
# Runs the copy task N times in a row and prints each run beside the machine's state just before it:
# its effective clock (bench_memory's BM_EffectiveClock), how fast a loop of one add a turn runs
# (BM_OneAddLoop: about half the clock when another thread shares the core) and the read bandwidth
# on all threads. A run that is slow because the machine was (a lower clock, a neighbour on the
# cores) shows it here, and so does one that is slow for a reason of its own (the same clock, a
# longer run). The state is sampled before each run: a neighbour that comes and goes within a second
# can still slow a run whose line looks quiet.
#   usage, from the project root:  bench/copy_task_runs.sh [N=5] [build dir=build] [train flags...]
#   default train flags: --task copy --steps 400 (the Annotated Transformer's 20 epochs of 20 batches)
# Per run: the two GHz, GB/s, the run's wall seconds and tokens/s, and (with GNU time installed) its
# involuntary context switches: how often the OS took a core from it for someone else.
set -euo pipefail
runs=${1:-5}
build=${2:-build}
shift $(($# < 2 ? $# : 2))
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--task copy --steps 400)
for tool in "$build/bench/bench_memory" "$build/transformer/gradformer"; do
  [ -x "$tool" ] || { echo "copy_task_runs.sh: $tool not found (build with -DCMAKE_BUILD_TYPE=Release first)" >&2; exit 2; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
counter() { grep -o "$1=[0-9.]*" | head -1 | cut -d= -f2; }
for i in $(seq "$runs"); do
  state=$("$build/bench/bench_memory" --benchmark_filter='BM_EffectiveClock|BM_OneAddLoop|BM_StreamRead/threads:0' \
          --benchmark_min_time=0.2 2>/dev/null)
  ghz=$(echo "$state" | grep EffectiveClock | counter GHz)
  loop=$(echo "$state" | grep OneAddLoop | counter GHz)
  gbs=$(echo "$state" | grep StreamRead | grep -o 'bytes_per_second=[0-9.]*[kMGT]*' | cut -d= -f2)
  start=$(date +%s%N)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%c" -o "$out/time" "$build/transformer/gradformer" train "${flags[@]}" --out "$out/run" --force > "$out/log"
    switches=$(cat "$out/time")
  else
    "$build/transformer/gradformer" train "${flags[@]}" --out "$out/run" --force > "$out/log"
    switches="-"
  fi
  wall_ms=$((($(date +%s%N) - start) / 1000000))
  tokens=$(grep -o '([0-9]* scored tokens/s)' "$out/log" | tr -dc '0-9')
  printf 'run %d  clock %.2f GHz  one-add loop %.2f GHz  read %sB/s  |  wall %d.%03d s  %s tokens/s  preempted %s times\n' \
    "$i" "$ghz" "$loop" "$gbs" $((wall_ms / 1000)) $((wall_ms % 1000)) "$tokens" "$switches"
done
