#!/usr/bin/env bash
# Tensor fusion on a training step's gradients: hvdrun-bench --replay MODEL through libhvdrun's
# named, negotiated path, fusion off (0) and at Horovod's defaults (128 MiB, 1 ms), beside the raw
# library's allreduce of the whole gradient in one call and of the tensors one by one, all in the
# same run, for each backend and rank count. Each configuration runs ROUNDS times; the table shows
# the medians over rounds of each run's median step, and the ratios.
#
# It asserts nothing about the times: the machine is shared, so compare the ratios. See
# docs/benchmarks.md for the recorded results.
#
# Usage: scripts/bench/fusion_replay.sh [--model M] [--rounds N] [--ranks "2 4"] [--backends "gloo mpi"]
#                                       [--stage DIR]
set -euo pipefail

model=resnet50
rounds=3
ranks_list="2 4"
backends="gloo mpi"
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,12p model=model rounds=rounds ranks=ranks_list backends=backends stage=stage -- "$@"
bench_stage_with hvdrun hvdrun-bench
bench_out_dir

for backend in $backends; do
  for ranks in $ranks_list; do
    for ((round = 1; round <= rounds; ++round)); do
      bench_run_staged "$out/stderr" hvdrun -np "$ranks" "--$backend" hvdrun-bench --replay "$model" \
        --fusion-threshold-mb 0,128 --iters 10 --warmup 3 --baseline --json "$out/$backend-$ranks-$round.json"
    done
  done
done

/usr/bin/python3 - "$out" "$model" <<'PYTHON'
import glob, json, os, statistics, sys
out, model = sys.argv[1], sys.argv[2]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    backend, ranks, _ = os.path.basename(path)[:-5].split("-")
    runs.setdefault((backend, int(ranks)), []).append(json.load(open(path)))
print(f"{model}: median over rounds of each run's median step (ms)")
print("| backend | ranks | fusion off | fusion 128 MiB | raw whole | raw one by one | fused / best raw | off / fused |")
print("|---|---|---|---|---|---|---|---|")
for (backend, ranks), docs in sorted(runs.items()):
    def median(f):
        return statistics.median(f(d) for d in docs)
    off = median(lambda d: next(s["step_ms"] for s in d["settings"] if s["fusion_threshold_mb"] == 0))
    on = median(lambda d: next(s["step_ms"] for s in d["settings"] if s["fusion_threshold_mb"] == 128))
    whole = median(lambda d: d["baseline"]["whole_ms"])
    one = median(lambda d: d["baseline"]["one_by_one_ms"])
    print(f"| {backend} | {ranks} | {off:.1f} | {on:.1f} | {whole:.1f} | {one:.1f} | {on / min(whole, one):.2f} | "
          f"{off / on:.2f} |")
PYTHON
