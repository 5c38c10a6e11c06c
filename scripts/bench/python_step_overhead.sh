#!/usr/bin/env bash
# What hvdrun.torch's DistributedOptimizer costs per step against hvdrun-trainer's C++ gradient reducer,
# on the same model (fmnist-cnn, written again in PyTorch by scripts/bench/python_step_time.py), the same
# synthetic batch shape (64 images of 1x28x28 per rank) and one thread per rank: each program alone
# (hvdrun -np 1: no reduction) and on 2 ranks over Gloo, the four runs alternating so that the machine's
# drift falls on all. The table shows, per program, the median over every timed step of rank 0 (all
# rounds together), the cost of going from 1 to 2 ranks (2-rank median - 1-rank median: averaging the
# gradients and waiting for the other rank), and the ratios Python / C++.
#
# It asserts nothing about the times: the machine is shared, so compare the ratios. See
# docs/benchmarks.md for the recorded results.
#
# Usage: scripts/bench/python_step_overhead.sh [--rounds N] [--steps N] [--stage DIR] [--python PATH]
set -euo pipefail

rounds=5
steps=50
python=/usr/bin/python3
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,13p rounds=rounds steps=steps stage=stage python=python -- "$@"
bench_stage_with hvdrun hvdrun-trainer
python_path=$(find "$stage/lib" -maxdepth 3 -type d -name dist-packages -print -quit)
if [ -z "$python_path" ] || [ ! -d "$python_path/hvdrun" ]; then
  echo "python_step_overhead.sh: no hvdrun Python package under $stage/lib (build with HVDRUN_PYTHON=ON, then install)" >&2
  exit 1
fi

bench_out_dir
for ((round = 1; round <= rounds; ++round)); do
  for ranks in 1 2; do
    "$stage/bin/hvdrun" -np "$ranks" -H "localhost:$ranks" --gloo "$stage/bin/hvdrun-trainer" --model fmnist-cnn \
      --synthetic --batch-size 64 --image-size 28 --steps "$steps" --warmup-steps 10 --threads 1 >>"$out/cpp-$ranks" 2>&1
    PYTHONPATH="$python_path" "$stage/bin/hvdrun" -np "$ranks" -H "localhost:$ranks" --gloo "$python" \
      "$repo_root/scripts/bench/python_step_time.py" --steps "$steps" --warmup-steps 10 >>"$out/python-$ranks" 2>&1
  done
  echo "round $round/$rounds done" >&2
done

"$python" - "$out" "$rounds" "$steps" <<'PYTHON'
import re, statistics, sys
out, rounds, steps = sys.argv[1], sys.argv[2], sys.argv[3]
def median_ms(name):
    times = [float(m.group(1)) for line in open("%s/%s" % (out, name))
             for m in [re.search(r"^(?:\[0\]<stdout>:)?step \d+/\d+: ([0-9.]+) s", line)] if m]
    return 1000 * statistics.median(times), len(times)
rows = {}
for program in ("cpp", "python"):
    (one, n1), (two, n2) = median_ms(program + "-1"), median_ms(program + "-2")
    rows[program] = (one, two, two - one, n1, n2)
print("%d rounds x %s steps, rank 0's steps, medians in ms" % (int(rounds), steps))
print("| program | 1 rank | 2 ranks | 2 ranks - 1 rank | steps timed |")
print("|---|---|---|---|---|")
for program, label in (("cpp", "hvdrun-trainer (C++ GradientReducer)"), ("python", "hvdrun.torch DistributedOptimizer")):
    one, two, cost, n1, n2 = rows[program]
    print("| %s | %.2f | %.2f | %.2f | %d + %d |" % (label, one, two, cost, n1, n2))
c, p = rows["cpp"], rows["python"]
print("| ratio Python / C++ | %.2fx | %.2fx | %s |  |" % (p[0] / c[0], p[1] / c[1],
      "%.2fx" % (p[2] / c[2]) if c[2] > 0 else "n/a (C++ cost <= 0)"))
PYTHON
