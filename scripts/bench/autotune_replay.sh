#!/usr/bin/env bash
# Autotuning against an exhaustive sweep: hvdrun-bench --replay MODEL through libhvdrun's named,
# negotiated path on RANKS ranks over one backend.
#
# 1. The sweep: every fusion threshold x cycle time of the grid (--thresholds, --cycles), SWEEPS
#    times in one hvdrun-bench each; a setting's step is the median over sweeps of each sweep's
#    median step. It gives the worst fixed setting, and the sweep's three best: the candidates.
# 2. Then ROUNDS rounds, each running, in an order that rotates every round: the candidates, the
#    default setting (libhvdrun's 128 MiB, 1 ms), and --autotune with its default samples (3
#    warm-up samples, then 20 settings and 8 samples of the response cache on and off, of 10 steps:
#    310 steps), for TUNED_ITERS steps. Each writes a
#    timeline (--timeline-filename), from which rank 0's steps are timed alike: a step is the
#    replay's tensors, from the submission of its first to the end of its last response. The
#    autotune run's step is the median of its steps after the AUTOTUNE_KEPT mark (the timeline's
#    mark of the setting kept); the fixed runs' the median of their timed steps. The best fixed
#    setting is the candidate (or the default) with the lowest median over rounds: a sweep's single
#    winner is often a lucky spell of the shared machine, and measured again, alternately, is not.
# The table gives the sweep, then the medians over rounds and the ratios: autotune / best fixed
# (goal <= 1.05) and autotune / default (goal <= 1.02), with how many steps the search took
# (scripts/bench/autotune_analysis.py, which autotune_synthetic.sh shares).
#
# scripts/gpu-check.sh runs it over NCCL at one rank on a GPU (--backend nccl --ranks 1 --stage BUNDLE,
# the relocatable bundle, where this script is share/hvdrun/scripts/bench/autotune_replay.sh).
#
# It asserts nothing about the times: the machine is shared, so compare the ratios. See
# docs/benchmarks.md and docs/autotune.md for the recorded results.
#
# Usage: scripts/bench/autotune_replay.sh [--model M] [--ranks N] [--backend gloo|mpi|nccl] [--rounds N]
#          [--sweeps N] [--thresholds "0,1,4,16,64,128"] [--cycles "1,5,25,100"] [--tuned-iters N]
#          [--stage DIR] [--keep DIR]
set -euo pipefail

model=resnet50
ranks=2
backend=gloo
rounds=5
sweeps=2
thresholds="0,1,4,16,64,128"
cycles="1,5,25,100"
tuned_iters=400
fixed_iters=40
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,30p model=model ranks=ranks backend=backend rounds=rounds sweeps=sweeps \
  thresholds=thresholds cycles=cycles tuned-iters=tuned_iters stage=stage keep=keep -- "$@"
bench_whole_number --rounds "$rounds" 1
bench_whole_number --sweeps "$sweeps" 1
bench_whole_number --ranks "$ranks" 1
bench_whole_number --tuned-iters "$tuned_iters" 320
bench_stage_with hvdrun hvdrun-bench
bench_out_dir
analysis="$(dirname "${BASH_SOURCE[0]}")/autotune_analysis.py"

echo "load before: $(uptime)"
for ((sweep = 1; sweep <= sweeps; ++sweep)); do
  bench_run_staged "$out/stderr" hvdrun -np "$ranks" "--$backend" hvdrun-bench --replay "$model" \
    --fusion-threshold-mb "$thresholds" --cycle-time-ms "$cycles" --iters 10 --warmup 3 \
    --json "$out/sweep-$sweep.json"
done
candidates="$(/usr/bin/python3 "$analysis" candidates "$out")"
read -r -a fixed <<<"$candidates 128/1"

run_fixed() {  # NAME MB MS ROUND
  bench_run_staged "$out/stderr" hvdrun -np "$ranks" "--$backend" --timeline-filename "$out/$1-$4.trace.json" \
    hvdrun-bench --replay "$model" --fusion-threshold-mb "$2" --cycle-time-ms "$3" --iters "$fixed_iters" \
    --warmup 3 --json "$out/$1-$4.json"
}
run_tuned() {  # ROUND
  bench_run_staged "$out/stderr" hvdrun -np "$ranks" "--$backend" --autotune \
    --autotune-log-file "$out/autotune-$1.csv" --timeline-filename "$out/autotune-$1.trace.json" \
    hvdrun-bench --replay "$model" --iters "$tuned_iters" --warmup 3 --json "$out/autotune-$1.json"
}
bench_autotune_rounds "$rounds" "${fixed[@]}"
echo "load after: $(uptime)"

/usr/bin/python3 "$analysis" report "$out" "$model, $ranks ranks, $backend" "$rounds"
