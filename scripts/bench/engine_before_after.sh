#!/usr/bin/env bash
# Two builds of hvdrun side by side on the host backends: the ResNet-50 gradient replay (fused, named)
# and a 4-byte allreduce, named (negotiated) and in call order, each beside the raw library's, over
# Gloo and MPI on 2 ranks. Each round runs every measurement with the two builds in turn, the order
# alternating round by round, so that the machine's load reaches both alike; the table shows the
# medians over rounds and after / before. For a change to libhvdrun's engine: "unchanged or better"
# is a ratio near or under 1.
#
# It asserts nothing about the times: the machine is shared, so compare the ratios. See
# docs/benchmarks.md for the recorded results.
#
# Usage: scripts/bench/engine_before_after.sh --before STAGE --after STAGE [--rounds N] [--backends "gloo mpi"] [--keep DIR]
#   STAGE: an installed hvdrun (cmake --install BUILD --prefix STAGE) of each build; --keep DIR keeps
#   every run's JSON there.
set -euo pipefail

rounds=5
backends="gloo mpi"
before=""
after=""
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,14p rounds=rounds backends=backends before=before after=after keep=keep -- "$@"
bench_whole_number --rounds "$rounds" 1
[[ -n "$before" && -n "$after" ]] || bench_die "give --before STAGE and --after STAGE (see --help)"
for which in before after; do
  stage=${!which}
  bench_stage_with hvdrun hvdrun-bench
done
bench_out_dir

# measure BUILD NAME ARGS...: one run of ARGS under BUILD's stage, its JSON in $out/NAME-BUILD-ROUND.json.
measure() {
  local which=$1 name=$2
  shift 2
  stage=${!which}
  bench_run_staged "$out/stderr" "$@" --json "$out/$name-$which-$round.json"
}

for ((round = 1; round <= rounds; ++round)); do
  order=(before after)
  ((round % 2 == 0)) && order=(after before)
  for backend in $backends; do
    cycle=0
    [[ "$backend" == mpi ]] && cycle=1  # as docs/benchmarks.md's named latency over MPI
    for which in "${order[@]}"; do
      measure "$which" "replay_$backend" hvdrun -np 2 "--$backend" hvdrun-bench --replay resnet50 \
        --iters 10 --warmup 3 --baseline
      measure "$which" "named_$backend" hvdrun -np 2 "--$backend" --cycle-time-ms "$cycle" hvdrun-bench \
        -b 4 -e 4 --named --baseline --iters 200 --warmup 20
      measure "$which" "callorder_$backend" hvdrun -np 2 "--$backend" hvdrun-bench -b 4 -e 4 --baseline \
        --iters 200 --warmup 20
    done
  done
done

/usr/bin/python3 - "$out" <<'PYTHON'
import glob, json, os, statistics, sys
out = sys.argv[1]
values = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    name, which, _ = os.path.basename(path)[:-5].split("-")
    d = json.load(open(path))
    if name.startswith("replay"):
        figure, raw = d["settings"][0]["step_ms"], d["baseline"]["whole_ms"]
    else:
        figure, raw = d["summary"]["time_us"], d["summary"]["baseline_time_us"]
    values.setdefault((name, which), []).append((figure, raw))
print("medians over rounds; replay: step ms (raw: whole gradient in one call); 4 B: us a call")
print("| measurement | before | raw (before's run) | after | raw (after's run) | after / before |")
print("|---|---|---|---|---|---|")
for name in sorted({n for n, _ in values}):
    b = [v for v in values[(name, "before")]]
    a = [v for v in values[(name, "after")]]
    mb, ma = statistics.median(x for x, _ in b), statistics.median(x for x, _ in a)
    rb, ra = statistics.median(r for _, r in b), statistics.median(r for _, r in a)
    print(f"| {name.replace('_', ' ')} | {mb:.3g} | {rb:.3g} | {ma:.3g} | {ra:.3g} | {ma / mb:.2f} |")
PYTHON
