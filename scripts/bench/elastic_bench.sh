#!/usr/bin/env bash
# Elastic jobs (docs/elastic.md): how long a job takes from a rank's failure to the first step of its next
# round, and what state.commit() costs, each measured by scripts/bench/elastic_timing.py under hvdrun.
#  - recovery, for each N of --ranks (default 3): N one-slot hosts (127.0.0.1 to 127.0.0.N, all this
#    machine), --min-np N-1, a small model; the last rank SIGKILLs itself at step 100; the time from just
#    before the kill to the end of rank 0's first step in round 1, beside the median step time of round 0
#    (the same job before the failure).
#  - commit: 2 ranks on one host, a ResNet-50 TorchState (SGD with momentum), batch 8 of 3x64x64 per rank:
#    the median state.commit() beside the median training step, and the commit's share of 10 steps.
# Each is run ROUNDS times, alternating (each round: every N's recovery job, then the commit job); the
# table gives the median over the rounds.
#
# It asserts nothing about the times: the machine is shared, so compare the ratios. See
# docs/benchmarks.md for the recorded results.
#
# Usage: scripts/bench/elastic_bench.sh [--rounds N] [--ranks N,N,...] [--stage DIR] [--python PATH]
set -euo pipefail

rounds=5
ranks=3
python=/usr/bin/python3
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,16p rounds=rounds ranks=ranks stage=stage python=python -- "$@"
bench_whole_number --rounds "$rounds" 1
IFS=, read -r -a sizes <<<"$ranks"
((${#sizes[@]} > 0)) || bench_die "--ranks needs at least one number"
for size in "${sizes[@]}"; do
  bench_whole_number --ranks "$size" 2
  ((size <= 254)) || bench_die "--ranks: $size is more than 254 hosts 127.0.0.N"
done
bench_stage_with hvdrun
python_path=$(find "$stage/lib" -maxdepth 3 -type d -name dist-packages -print -quit)
if [ -z "$python_path" ] || [ ! -d "$python_path/hvdrun" ]; then
  bench_die "no hvdrun Python package under $stage/lib (build with HVDRUN_PYTHON=ON, then install)"
fi

bench_out_dir
timing="$repo_root/scripts/bench/elastic_timing.py"
# The hosts of an N-rank job: 127.0.0.1:1,...,127.0.0.N:1.
hosts_of() {
  local list="127.0.0.1:1" host
  for ((host = 2; host <= $1; ++host)); do list+=",127.0.0.$host:1"; done
  echo "$list"
}

for ((round = 1; round <= rounds; ++round)); do
  for size in "${sizes[@]}"; do
    run="$out/recovery-$size-$round"
    mkdir -p "$run"
    PYTHONPATH="$python_path" "$stage/bin/hvdrun" -np "$size" -H "$(hosts_of "$size")" --min-np $((size - 1)) \
      --gloo "$python" "$timing" recovery "$run" >"$run/log" 2>&1 ||
      { tail -20 "$run/log"; bench_die "the recovery job of $size ranks failed"; }
  done
  mkdir -p "$out/commit-$round"
  PYTHONPATH="$python_path" "$stage/bin/hvdrun" -np 2 -H localhost:2 --min-np 2 --gloo \
    "$python" "$timing" commit "$out/commit-$round" >"$out/commit-$round/log" 2>&1 ||
    { tail -20 "$out/commit-$round/log"; bench_die "the commit job failed"; }
  echo "round $round/$rounds done" >&2
done

"$python" - "$out" "$rounds" "${sizes[@]}" <<'PYTHON'
import statistics
import sys

out, rounds, sizes = sys.argv[1], int(sys.argv[2]), [int(size) for size in sys.argv[3:]]


def read(round_dir, name):
    with open("%s/%s/%s" % (out, round_dir, name), encoding="ascii") as value:
        return float(value.read())


def row(measure, values, scale, digits):
    text = " ".join("%.*f" % (digits, scale * value) for value in values)
    print("| %s | %.*f | %s |" % (measure, digits, scale * statistics.median(values), text))


print("| measure | median | over the rounds |")
print("|---|---|---|")
for size in sizes:
    runs = ["recovery-%d-%d" % (size, r) for r in range(1, rounds + 1)]
    row("%d ranks: failure to the first step of round 1 (s)" % size,
        [read(run, "first_step") - read(run, "killed") for run in runs], 1, 2)
    row("%d ranks: round 0's step, same job (ms)" % size, [read(run, "step_s") for run in runs], 1e3, 2)
commit = [read("commit-%d" % r, "commit") for r in range(1, rounds + 1)]
train = [read("commit-%d" % r, "step") for r in range(1, rounds + 1)]
row("ResNet-50 state.commit() (ms)", commit, 1e3, 0)
row("ResNet-50 training step, batch 8 of 64x64 (ms)", train, 1e3, 0)
ratio = statistics.median(commit) / (10 * statistics.median(train))
print("| one commit per 10 steps: its share of the time | %.1f%% | |" % (100 * ratio))
PYTHON
