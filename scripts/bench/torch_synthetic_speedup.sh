#!/usr/bin/env bash
# The CPU speedup of Horovod's synthetic benchmark as written today
# (examples/pytorch_synthetic_benchmark/: hvd.SyncBatchNorm, DistributedOptimizer, ResNet-50) run
# through hvdrun.torch: total images/s on 2 ranks against 1 rank over Gloo, one torch thread per rank,
# 224x224 synthetic images, 8 per rank and batch. The 1- and 2-rank runs alternate, so that the
# machine's drift falls on both; each run's figure is the script's own "Total img/sec" line (the mean
# over its timed iterations, times the ranks). The table gives every run and the medians; the speedup
# is median(2 ranks) / median(1 rank). On 1 rank hvd.SyncBatchNorm is torch's batch_norm (as Horovod's);
# on 2 it makes 3 collectives per layer and step (an allgather forward, a sum allreduce backward, and
# the layer's gradients). With --local-batch-norm, each round also runs 2 ranks with torch's BatchNorm2d
# instead (statistics of each rank's own batch): the difference is what synchronizing costs.
#
# It asserts nothing about the times: see docs/benchmarks.md for the recorded results.
#
# Usage: scripts/bench/torch_synthetic_speedup.sh [--rounds N] [--batches N] [--model NAME] [--stage DIR]
#                                                 [--python PATH] [--local-batch-norm]
set -euo pipefail

rounds=3
batches=5
model=resnet50
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
stage="$repo_root/build/stage"
python=/usr/bin/python3
local_bn=0
while (($# > 0)); do
  case "$1" in
    --local-batch-norm)
      local_bn=1
      shift
      continue
      ;;
    --rounds) rounds=$2 ;;
    --batches) batches=$2 ;;
    --model) model=$2 ;;
    --stage) stage=$2 ;;
    --python) python=$2 ;;
    -h | --help)
      sed -n '2,18p' "$0"
      exit 0
      ;;
    *)
      echo "torch_synthetic_speedup.sh: unknown argument '$1' (see --help)" >&2
      exit 2
      ;;
  esac
  shift 2
done
if [ ! -x "$stage/bin/hvdrun" ]; then
  echo "torch_synthetic_speedup.sh: no hvdrun in $stage/bin (build, then cmake --install build --prefix $stage)" >&2
  exit 1
fi
python_path=$(find "$stage/lib" -maxdepth 3 -type d -name dist-packages -print -quit)
if [ -z "$python_path" ] || [ ! -d "$python_path/hvdrun" ]; then
  echo "torch_synthetic_speedup.sh: no hvdrun Python package under $stage/lib (build with HVDRUN_PYTHON=ON, then install)" >&2
  exit 1
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cells=(1 2)
((local_bn)) && cells+=(2-local)
for ((round = 1; round <= rounds; ++round)); do
  for cell in "${cells[@]}"; do
    ranks=${cell%-local}
    extra=()
    [ "$cell" = 2-local ] && extra=(--local-batch-norm)
    PYTHONPATH="$python_path" "$stage/bin/hvdrun" -np "$ranks" -H "localhost:$ranks" --gloo "$python" \
      "$repo_root/examples/pytorch_synthetic_benchmark/pytorch_synthetic_benchmark.py" --no-cuda --threads 1 \
      --model "$model" --image-size 224 --batch-size 8 --num-warmup-batches 2 --num-batches-per-iter "$batches" \
      --num-iters 1 "${extra[@]}" >"$out/run-$round-$cell" 2>&1 || {
      echo "torch_synthetic_speedup.sh: the $cell run of round $round failed:" >&2
      tail -n 5 "$out/run-$round-$cell" >&2
      exit 1
    }
  done
  echo "round $round/$rounds done" >&2
done

"$python" - "$out" "$rounds" "${cells[@]}" <<'PYTHON'
import re, statistics, sys

out, rounds, cells = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
totals = {cell: [] for cell in cells}
for round_number in range(1, rounds + 1):
    for cell in cells:
        text = open("%s/run-%d-%s" % (out, round_number, cell)).read()
        match = re.search(r"Total img/sec on %s CPU\(s\): ([0-9.]+)" % cell[0], text)
        if not match:
            sys.exit("torch_synthetic_speedup.sh: no 'Total img/sec' line in the %s run of round %d" % (cell, round_number))
        totals[cell].append(float(match.group(1)))
names = {"1": "1 rank", "2": "2 ranks, hvd.SyncBatchNorm", "2-local": "2 ranks, torch's BatchNorm2d"}
print("| run | images/s total, each round | median | speedup |")
print("|---|---|---|---|")
for cell in cells:
    median = statistics.median(totals[cell])
    print("| %s | %s | %.2f | %.2fx |" % (names[cell], ", ".join("%.2f" % v for v in totals[cell]), median,
                                           median / statistics.median(totals["1"])))
PYTHON
