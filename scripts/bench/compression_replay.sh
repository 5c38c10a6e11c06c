#!/usr/bin/env bash
# Gradient compression on a training step's gradients: hvdrun-bench --replay MODEL --compression
# none,fp16,bf16,fp8 at 2 ranks, every format in the same run (interleaved step by step, each step
# from the same gradients), over each backend, in two settings:
#   loopback  both ranks on this machine: the "network" is memory copies on the machine's cores
#   cluster   one rank on each of two servers of the test cluster (docs/testing-cluster.md; as root),
#             each server's links (eth0, data0) shaped to RATE by `tc qdisc ... tbf` (a lab network's)
# Each configuration runs ROUNDS times (round by round: drift reaches every configuration alike); the
# table shows per format the medians over rounds of each run's median step, of its ratio to none's
# step in the same run, of the bytes sent over float32's, and of the relative error against the
# exact float32 sums. It asserts nothing about the times. See docs/benchmarks.md for the results.
#
# Usage: scripts/bench/compression_replay.sh [--model M] [--rounds N] [--backends "gloo mpi"]
#   [--settings "loopback cluster"] [--link-rate 1gbit] [--formats none,fp16,bf16,fp8] [--op average]
#   [--iters N] [--warmup N] [--stage DIR] [--build DIR] [--keep DIR]
#   --stage DIR  an installed hvdrun (cmake --install build --prefix DIR; default build/stage)
#   --build DIR  a build tree with bin/hvdrun-test-cluster, for the cluster setting (default build)
#   --keep DIR   keep every run's --json there (default: a temporary directory, removed)
set -euo pipefail

# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
model=vgg16
rounds=3
backends="gloo mpi"
settings="loopback cluster"
link_rate=1gbit
formats=none,fp16,bf16,fp8
op=average
iters=3
warmup=1
keep=""
bench_parse_flags 2,18p model=model rounds=rounds backends=backends settings=settings link-rate=link_rate \
  formats=formats op=op iters=iters warmup=warmup stage=stage build=build keep=keep -- "$@"
bench_whole_number --rounds "$rounds" 1
bench_whole_number --iters "$iters" 1
bench_whole_number --warmup "$warmup" 0
bench_tc_rate --link-rate "$link_rate"
for setting in $settings; do
  [[ "$setting" == loopback || "$setting" == cluster ]] || bench_die "--settings: unknown setting '$setting'"
done
for backend in $backends; do
  [[ "$backend" == gloo || "$backend" == mpi ]] || bench_die "--backends: unknown backend '$backend'"
done
bench_stage_with hvdrun hvdrun-bench hvdrun-agent
bench_out_dir

bench=("$stage/bin/hvdrun-bench" --replay "$model" --compression "$formats" --op "$op" --iters "$iters"
  --warmup "$warmup")
cluster_cmd=()
if [[ " $settings " == *" cluster "* ]]; then
  ((EUID == 0)) || bench_die "the cluster setting needs root (network namespaces); or pass --settings loopback"
  [[ -x "$build/bin/hvdrun-test-cluster" ]] || bench_die "no $build/bin/hvdrun-test-cluster: build it, or pass --build DIR"
  command -v tc >/dev/null || bench_die "no tc: install iproute2"
  bench_cluster_up 2
  # Each server's egress on each of its links, both directions of the ranks' traffic. The ranks talk
  # over eth0 only (--network-interface: Open MPI's TCP transport would otherwise stripe each message
  # over eth0 and data0, twice the shaped rate).
  bench_shape_links "$link_rate" server1 server2
  hosts="server1:1,server2:1"
  bench_cluster_hvdrun cluster_cmd "$stage/bin" 2 "$hosts" --network-interface eth0
fi

run() {  # setting backend round
  local json="$out/$1-$2-$3.json"
  local -a cmd
  if [[ "$1" == loopback ]]; then
    cmd=("$stage/bin/hvdrun" -np 2 "--$2" "${bench[@]}" --json "$json")
  else
    cmd=("${cluster_cmd[@]}" "--$2" "${bench[@]}" --json "$json")
  fi
  echo "round $3: $1 $2: ${cmd[*]}" >&2
  bench_run_staged "$out/$1-$2-$3.stderr" "${cmd[@]}"
}
for ((round = 1; round <= rounds; ++round)); do
  for setting in $settings; do
    for backend in $backends; do
      run "$setting" "$backend" "$round"
    done
  done
done

/usr/bin/python3 - "$out" "$model" "$link_rate" <<'PYTHON'
import glob, json, os, statistics, sys
out, model, rate = sys.argv[1], sys.argv[2], sys.argv[3]
runs = {}
for path in sorted(glob.glob(os.path.join(out, "*.json"))):
    setting, backend, _ = os.path.basename(path)[:-5].split("-")
    runs.setdefault((setting, backend), []).append(json.load(open(path)))
first = next(iter(runs.values()))[0]
print(f"{model}: {first['tensors']} tensors, {first['bytes'] / 1e6:.0f} MB, {first['op']}, {first['ranks']} ranks, "
      f"{len(next(iter(runs.values())))} rounds of a median of {first['steps']} steps; medians over rounds")
print("| setting | backend | format | step (ms) | ÷ none (range over rounds) | wire bytes ÷ float32's | relative error |")
print("|---|---|---|---|---|---|---|")
for (setting, backend), docs in sorted(runs.items()):
    label = setting if setting == "loopback" else f"2 servers, {rate}"
    for i, entry in enumerate(docs[0]["settings"]):
        def median(key):
            return statistics.median(d["settings"][i][key] for d in docs)
        ratios = [d["settings"][i].get("vs_none") for d in docs]
        vs_none = (f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
                   if None not in ratios else "-")
        print(f"| {label} | {backend} | {entry['compression']} | {median('step_ms'):.0f} | {vs_none} | "
              f"{median('wire_ratio'):.3f} | {median('rel_error'):.1e} |")
PYTHON
