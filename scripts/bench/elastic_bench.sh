#!/usr/bin/env bash
# Elastic jobs (docs/elastic.md): how long a job takes from a rank's failure to the first step of its next
# round, and what state.commit() costs, each measured by scripts/bench/elastic_timing.py under hvdrun.
#  - recovery: 3 one-slot hosts (127.0.0.1-3, all this machine), --min-np 2, a small model; the last rank
#    SIGKILLs itself at step 100; the time from just before the kill to the end of rank 0's first step in
#    round 1, beside the median step time of round 0 (the same job before the failure).
#  - commit: 2 ranks on one host, a ResNet-50 TorchState (SGD with momentum), batch 8 of 3x64x64 per rank:
#    the median state.commit() beside the median training step, and the commit's share of 10 steps.
# Each is run ROUNDS times, alternating; the table gives the median over the rounds.
#
# It asserts nothing about the times: the machine is shared, so compare the ratios. See
# docs/benchmarks.md for the recorded results.
#
# Usage: scripts/bench/elastic_bench.sh [--rounds N] [--stage DIR] [--python PATH]
set -euo pipefail

rounds=5
python=/usr/bin/python3
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,14p rounds=rounds stage=stage python=python -- "$@"
bench_whole_number --rounds "$rounds" 1
bench_stage_with hvdrun
python_path=$(find "$stage/lib" -maxdepth 3 -type d -name dist-packages -print -quit)
if [ -z "$python_path" ] || [ ! -d "$python_path/hvdrun" ]; then
  bench_die "no hvdrun Python package under $stage/lib (build with HVDRUN_PYTHON=ON, then install)"
fi

bench_out_dir
timing="$repo_root/scripts/bench/elastic_timing.py"
for ((round = 1; round <= rounds; ++round)); do
  mkdir -p "$out/recovery-$round" "$out/commit-$round"
  PYTHONPATH="$python_path" "$stage/bin/hvdrun" -np 3 -H 127.0.0.1:1,127.0.0.2:1,127.0.0.3:1 --min-np 2 --gloo \
    "$python" "$timing" recovery "$out/recovery-$round" >"$out/recovery-$round/log" 2>&1 ||
    { tail -20 "$out/recovery-$round/log"; bench_die "the recovery job failed"; }
  PYTHONPATH="$python_path" "$stage/bin/hvdrun" -np 2 -H localhost:2 --min-np 2 --gloo \
    "$python" "$timing" commit "$out/commit-$round" >"$out/commit-$round/log" 2>&1 ||
    { tail -20 "$out/commit-$round/log"; bench_die "the commit job failed"; }
  echo "round $round/$rounds done" >&2
done

"$python" - "$out" "$rounds" <<'PYTHON'
import statistics
import sys

out, rounds = sys.argv[1], int(sys.argv[2])


def read(round_dir, name):
    with open("%s/%s/%s" % (out, round_dir, name), encoding="ascii") as value:
        return float(value.read())


recovery = [read("recovery-%d" % r, "first_step") - read("recovery-%d" % r, "killed") for r in range(1, rounds + 1)]
step = [read("recovery-%d" % r, "step_s") for r in range(1, rounds + 1)]
commit = [read("commit-%d" % r, "commit") for r in range(1, rounds + 1)]
train = [read("commit-%d" % r, "step") for r in range(1, rounds + 1)]
print("| measure | median | over the rounds |")
print("|---|---|---|")
print("| failure to the first step of round 1 (s) | %.2f | %s |" % (statistics.median(recovery),
                                                                   " ".join("%.2f" % v for v in recovery)))
print("| round 0's step, same job (ms) | %.2f | %s |" % (1e3 * statistics.median(step),
                                                     " ".join("%.2f" % (1e3 * v) for v in step)))
print("| ResNet-50 state.commit() (ms) | %.0f | %s |" % (1e3 * statistics.median(commit),
                                                        " ".join("%.0f" % (1e3 * v) for v in commit)))
print("| ResNet-50 training step, batch 8 of 64x64 (ms) | %.0f | %s |" % (
    1e3 * statistics.median(train), " ".join("%.0f" % (1e3 * v) for v in train)))
ratio = statistics.median(commit) / (10 * statistics.median(train))
print("| one commit per 10 steps: its share of the time | %.1f%% | |" % (100 * ratio))
PYTHON
