#!/usr/bin/env bash
# What the timeline costs: hvdrun-bench --replay MODEL through libhvdrun's named, negotiated path with
# fusion off (one response per tensor: the most timeline events a step can make) and at the
# defaults (128 MiB), each run once without and once with --timeline-filename --timeline-mark-cycles,
# the two alternating so that the machine's drift falls on both. The table shows the medians over
# rounds of each run's median step, and their ratio (on / off).
#
# It asserts nothing about the times: the machine is shared, so compare the ratios. See
# docs/benchmarks.md for the recorded results.
#
# Usage: scripts/bench/timeline_overhead.sh [--model M] [--rounds N] [--ranks N] [--backends "gloo mpi"]
#                                           [--stage DIR]
set -euo pipefail

model=resnet50
rounds=5
ranks=2
backends="gloo mpi"
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,12p model=model rounds=rounds ranks=ranks backends=backends stage=stage -- "$@"
bench_stage_with hvdrun hvdrun-bench
bench_out_dir

for backend in $backends; do
  for ((round = 1; round <= rounds; ++round)); do
    for timeline in off on; do
      flags=()
      [ "$timeline" = on ] && flags=(--timeline-filename "$out/trace-$backend-$round.json" --timeline-mark-cycles)
      bench_run_staged "$out/stderr" hvdrun -np "$ranks" "--$backend" "${flags[@]}" hvdrun-bench \
        --replay "$model" --fusion-threshold-mb 0,128 --iters 10 --warmup 3 --json "$out/$backend-$timeline-$round.json"
    done
  done
done

/usr/bin/python3 - "$out" "$model" "$ranks" <<'PYTHON'
import glob, json, os, statistics, sys
out, model, ranks = sys.argv[1], sys.argv[2], sys.argv[3]
steps = {}
for path in glob.glob(os.path.join(out, "*-o*-*.json")):
    backend, timeline, _ = os.path.basename(path)[:-5].split("-")
    for setting in json.load(open(path))["settings"]:
        key = (backend, setting["fusion_threshold_mb"], timeline)
        steps.setdefault(key, []).append(setting["step_ms"])
events = {}
for path in glob.glob(os.path.join(out, "trace-*.json")):
    backend = os.path.basename(path).split("-")[1]
    events.setdefault(backend, []).append(len(json.load(open(path))))
print(f"{model}, {ranks} ranks: median over rounds of each run's median step (ms)")
print("| backend | fusion | timeline off | timeline on | on / off | events in the merged file |")
print("|---|---|---|---|---|---|")
for backend in sorted({k[0] for k in steps}):
    for mb in sorted({k[1] for k in steps if k[0] == backend}):
        off = statistics.median(steps[(backend, mb, "off")])
        on = statistics.median(steps[(backend, mb, "on")])
        label = "off" if mb == 0 else f"{mb:g} MiB"
        print(f"| {backend} | {label} | {off:.1f} | {on:.1f} | {on / off:.3f} | "
              f"{int(statistics.median(events.get(backend, [0])))} |")
PYTHON
