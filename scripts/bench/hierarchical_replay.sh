#!/usr/bin/env bash
# Hierarchical allreduce across hosts: the ResNet-50 gradient replay on 2 servers of the test cluster
# (docs/testing-cluster.md; as root) with 2 ranks each, every server's links shaped to RATE by
# `tc qdisc ... tbf` (a lab network's), flat over Gloo (--no-hierarchical-allreduce) against
# --hierarchical-allreduce (each host reduces through its shared memory, each local rank's slice
# crosses over Gloo), round by round:
#   hvdrun -np 4 -H server1:2,server2:2 --gloo --[no-]hierarchical-allreduce --network-interface eth0 \
#     hvdrun-bench --replay resnet50 --fusion-threshold-mb 128 --iters ITERS --warmup WARMUP --json F
# and the bytes each server sent on eth0 during the run (its TX counter before and after). Prints the
# medians over rounds of each run's median step and of the bytes per server, and their ratios. With
# --autotune, each round also runs the same job with --autotune and short samples (1 warm-up, 12
# scored, 3 steps each; then the hierarchical allreduce's 8 and the response cache's 8) and prints
# what the tuner kept of the hierarchical allreduce and how the flat ring scored against it. It
# asserts nothing about the times (the machine is shared). docs/benchmarks.md has the results.
#
# Usage: scripts/bench/hierarchical_replay.sh [--rounds N] [--link-rate 1gbit] [--iters N] [--warmup N]
#   [--autotune] [--stage DIR] [--build DIR]
#   --stage DIR  an installed hvdrun (cmake --install build --prefix DIR; default build/stage)
#   --build DIR  a build tree with bin/hvdrun-test-cluster (default build)
set -euo pipefail

# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
rounds=3 link_rate=1gbit iters=5 warmup=2 autotune=0
bench_parse_flags 2,19p rounds=rounds link-rate=link_rate iters=iters warmup=warmup stage=stage build=build \
  autotune=!autotune -- "$@"
((EUID == 0)) || bench_die "needs root (network namespaces)"
bench_stage_with hvdrun
bench_build_with hvdrun-test-cluster
bench_tc_rate --link-rate "$link_rate"
bench_out_dir

bench_cluster_up 2
bench_shape_links "$link_rate" server1 server2

tx_bytes() {  # server
  ip -n "$run_id-$1" -s -j link show eth0 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'
}
run() {  # mode round
  local json="$out/$1-$2.json"
  local -a mode=(--no-hierarchical-allreduce) cmd
  [[ "$1" == hierarchical ]] && mode=(--hierarchical-allreduce)
  bench_cluster_hvdrun cmd "$stage/bin" 4 server1:2,server2:2 --network-interface eth0 --gloo "${mode[@]}" \
    "$stage/bin/hvdrun-bench" --replay resnet50 --fusion-threshold-mb 128 --iters "$iters" --warmup "$warmup" \
    --json "$json"
  local before1 before2
  before1=$(tx_bytes server1) before2=$(tx_bytes server2)
  PATH="$stage/bin:$PATH" "${cmd[@]}" >/dev/null 2>"$out/$1-$2.stderr" ||
    { tail -20 "$out/$1-$2.stderr" >&2; bench_die "the $1 run of round $2 failed"; }
  echo "$(($(tx_bytes server1) - before1)) $(($(tx_bytes server2) - before2))" >"$out/$1-$2.tx"
}
# The tuner's samples: 1 warm-up, 12 scored, 8 of the hierarchical allreduce, 8 of the cache.
tuned_steps=$(((1 + 12 + 8 + 8) * 3 + 6))
run_tuned() {  # round
  local -a cmd
  bench_cluster_hvdrun cmd "$stage/bin" 4 server1:2,server2:2 --network-interface eth0 --gloo --autotune \
    --autotune-log-file "$out/autotune-$1.csv" --autotune-warmup-samples 1 --autotune-steps-per-sample 3 \
    --autotune-bayes-opt-max-samples 12 \
    "$stage/bin/hvdrun-bench" --replay resnet50 --iters "$tuned_steps" --warmup 0 --json "$out/autotune-$1.json"
  PATH="$stage/bin:$PATH" "${cmd[@]}" >/dev/null 2>"$out/autotune-$1.stderr" ||
    { tail -20 "$out/autotune-$1.stderr" >&2; bench_die "the autotune run of round $1 failed"; }
  grep -o 'autotune: kept .*' "$out/autotune-$1.stderr" | sed "s/^/round $1: /"
}
for ((round = 1; round <= rounds; ++round)); do
  run flat "$round"
  run hierarchical "$round"
  ((autotune == 0)) || run_tuned "$round"
done

/usr/bin/python3 - "$out" "$rounds" "$link_rate" "$((iters + warmup))" <<'PYTHON'
import json, os, statistics, sys
out, rounds, rate, steps = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rows = {}
for mode in ("flat", "hierarchical"):
    docs = [json.load(open(os.path.join(out, f"{mode}-{r}.json"))) for r in range(1, rounds + 1)]
    expected = "shm+gloo" if mode == "hierarchical" else "gloo"
    assert all(d["allreduce_path"] == expected for d in docs), f"{mode}: not every run's path is {expected}"
    tx = [sum(map(int, open(os.path.join(out, f"{mode}-{r}.tx")).read().split())) / 2 for r in range(1, rounds + 1)]
    rows[mode] = (statistics.median(d["settings"][0]["step_ms"] for d in docs), statistics.median(tx) / steps / 1e6)
print(f"resnet50 replay, 2 servers x 2 ranks, links {rate}, fusion 128 MiB: medians over {rounds} rounds")
print("| allreduce | path | step (ms) | MB sent per server per step (eth0) |")
print("|---|---|---|---|")
for mode, path in (("flat", "gloo"), ("hierarchical", "shm+gloo")):
    print(f"| {mode} | {path} | {rows[mode][0]:.0f} | {rows[mode][1]:.1f} |")
print(f"\nhierarchical / flat: step {rows['hierarchical'][0] / rows['flat'][0]:.2f}, "
      f"bytes {rows['hierarchical'][1] / rows['flat'][1]:.2f}")
PYTHON
