#!/usr/bin/env bash
# Autotuning against an exhaustive sweep, on Horovod's synthetic benchmark: examples/
# pytorch_synthetic_benchmark/ (hvd.DistributedOptimizer over ResNet-50's 161 gradient tensors,
# 102 MB a step) on RANKS ranks over one backend, one torch thread per rank, BATCH synthetic images
# of SIZE x SIZE per rank and step, and torch's BatchNorm2d (--local-batch-norm: hvd.SyncBatchNorm's
# layers share one collective name, so the tuner cannot tell its steps; docs/autotune.md). At 32
# px a step's compute is a tenth of a second or two on one core, against the seconds of 224 px,
# and the backward pass still overlaps the gradients' allreduces.
#
# 1. The sweep: one job per fusion threshold x cycle time of the grid (--thresholds, --cycles),
#    SWEEPS times, each of FIXED_BATCHES batches after 3 warm-up ones; a setting's figure is the
#    median over sweeps of each job's median loop period (rank 0's timeline). It gives the worst
#    fixed setting and the sweep's three best: the candidates.
# 2. Then ROUNDS rounds, each running, in an order that rotates every round, the candidates and
#    the default setting (libhvdrun's 128 MiB, 1 ms) for FIXED_BATCHES batches, and --autotune with
#    its default samples (3 warm-up, 20 settings and 8 of the response cache, of 10 steps: 310
#    steps) for TUNED_BATCHES. Every run writes a timeline, from which rank 0's steps are timed
#    alike (scripts/bench/autotune_analysis.py, which autotune_replay.sh shares): the fixed runs'
#    after their first 3 steps, the autotune run's after its AUTOTUNE_KEPT mark, as the step (the
#    gradients' allreduces, from the first submission to the last response's end) and as the
#    loop's period (from the end of the step before: compute included, what the tuner scores and
#    what images/s measures). The best fixed setting is the one with the lowest median over rounds.
#
# It asserts nothing about the times: the machine is shared, so compare the ratios. See
# docs/benchmarks.md and docs/autotune.md for the recorded results.
#
# Usage: scripts/bench/autotune_synthetic.sh [--model resnet50|resnet18] [--image-size SIZE]
#          [--batch-size BATCH] [--ranks N] [--backend gloo|mpi] [--rounds N] [--sweeps N]
#          [--thresholds "0,1,4,16,64,128"] [--cycles "1,5,25,100"] [--fixed-batches N]
#          [--tuned-batches N] [--stage DIR] [--keep DIR]
set -euo pipefail

model=resnet50
image_size=32
batch_size=8
ranks=2
backend=gloo
rounds=5
sweeps=1
thresholds="0,1,4,16,64,128"
cycles="1,5,25,100"
fixed_batches=40
tuned_batches=400
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,30p model=model image-size=image_size batch-size=batch_size ranks=ranks backend=backend \
  rounds=rounds sweeps=sweeps thresholds=thresholds cycles=cycles fixed-batches=fixed_batches \
  tuned-batches=tuned_batches stage=stage keep=keep -- "$@"
bench_whole_number --image-size "$image_size" 32
bench_whole_number --batch-size "$batch_size" 1
bench_whole_number --ranks "$ranks" 2
bench_whole_number --rounds "$rounds" 1
bench_whole_number --sweeps "$sweeps" 1
bench_whole_number --fixed-batches "$fixed_batches" 2
bench_whole_number --tuned-batches "$tuned_batches" 320
[[ "$thresholds" =~ ^[0-9.]+(,[0-9.]+)*$ ]] || bench_die "--thresholds: expected MiB such as 0,4,64, got '$thresholds'"
[[ "$cycles" =~ ^[0-9.]+(,[0-9.]+)*$ ]] || bench_die "--cycles: expected ms such as 1,5,25, got '$cycles'"
bench_stage_with hvdrun
python_path="$(find "$stage/lib" -maxdepth 3 -type d -name dist-packages -print -quit)"
[[ -n "$python_path" && -d "$python_path/hvdrun" ]] ||
  bench_die "no hvdrun Python package under $stage/lib (build with HVDRUN_PYTHON=ON, then install)"
bench_out_dir
analysis="$(dirname "${BASH_SOURCE[0]}")/autotune_analysis.py"

# synthetic LOG BATCHES HVDRUN-FLAG...: one job of 3 warm-up batches and BATCHES timed ones.
synthetic() {
  local log=$1 batches=$2
  shift 2
  PYTHONPATH="$python_path" bench_run_staged "$log" hvdrun -np "$ranks" -H "localhost:$ranks" "--$backend" "$@" \
    /usr/bin/python3 "$repo_root/examples/pytorch_synthetic_benchmark/pytorch_synthetic_benchmark.py" --no-cuda \
    --threads 1 --model "$model" --image-size "$image_size" --batch-size "$batch_size" --local-batch-norm \
    --num-warmup-batches 3 --num-batches-per-iter "$batches" --num-iters 1
}

echo "load before: $(uptime)"
IFS=, read -r -a threshold_list <<<"$thresholds"
IFS=, read -r -a cycle_list <<<"$cycles"
for ((sweep = 1; sweep <= sweeps; ++sweep)); do
  for mb in "${threshold_list[@]}"; do
    for ms in "${cycle_list[@]}"; do
      synthetic "$out/stderr" "$fixed_batches" --fusion-threshold-mb "$mb" --cycle-time-ms "$ms" \
        --timeline-filename "$out/sweep_${mb}_${ms}-$sweep.trace.json"
    done
  done
  echo "sweep $sweep/$sweeps done: $(uptime)" >&2
done
candidates="$(/usr/bin/python3 "$analysis" candidates "$out")"
read -r -a fixed <<<"$candidates 128/1"

run_fixed() { # NAME MB MS ROUND
  synthetic "$out/stderr" "$fixed_batches" --fusion-threshold-mb "$2" --cycle-time-ms "$3" \
    --timeline-filename "$out/$1-$4.trace.json"
}
run_tuned() { # ROUND
  synthetic "$out/stderr" "$tuned_batches" --autotune --autotune-log-file "$out/autotune-$1.csv" \
    --timeline-filename "$out/autotune-$1.trace.json"
  echo "autotune run of round $1/$rounds done: $(uptime)" >&2
}
bench_autotune_rounds "$rounds" "${fixed[@]}"
echo "load after: $(uptime)"

/usr/bin/python3 "$analysis" report "$out" \
  "Horovod's synthetic benchmark, $model at ${image_size} px, batch $batch_size, $ranks ranks, $backend" "$rounds"
