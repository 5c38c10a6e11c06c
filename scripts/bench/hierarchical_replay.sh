#!/usr/bin/env bash
# Hierarchical allreduce across hosts: the ResNet-50 gradient replay on 2 servers of the test cluster
# (docs/testing-cluster.md; as root) with 2 ranks each, every server's links shaped to RATE by
# `tc qdisc ... tbf` (a lab network's), flat over Gloo against --hierarchical-allreduce (each host
# reduces through its shared memory, each local rank's slice crosses over Gloo), round by round:
#   hvdrun -np 4 -H server1:2,server2:2 --gloo [--hierarchical-allreduce] --network-interface eth0 \
#     hvdrun-bench --replay resnet50 --fusion-threshold-mb 128 --iters ITERS --warmup WARMUP --json F
# and the bytes each server sent on eth0 during the run (its TX counter before and after). Prints the
# medians over rounds of each run's median step and of the bytes per server, and their ratios. It
# asserts nothing about the times (the machine is shared). docs/benchmarks.md has the results.
#
# Usage: scripts/bench/hierarchical_replay.sh [--rounds N] [--link-rate 1gbit] [--iters N] [--warmup N]
#   [--stage DIR] [--build DIR]
#   --stage DIR  an installed hvdrun (cmake --install build --prefix DIR; default build/stage)
#   --build DIR  a build tree with bin/hvdrun-test-cluster (default build)
set -euo pipefail

die() {
  echo "hierarchical_replay.sh: $*" >&2
  exit 2
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=3 link_rate=1gbit iters=5 warmup=2
stage="$repo_root/build/stage" build="$repo_root/build"
while (($# > 0)); do
  case "$1" in
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    --rounds | --link-rate | --iters | --warmup | --stage | --build)
      (($# >= 2)) || die "$1 needs a value"
      case "$1" in
        --rounds) rounds=$2 ;;
        --link-rate) link_rate=$2 ;;
        --iters) iters=$2 ;;
        --warmup) warmup=$2 ;;
        --stage) stage=$2 ;;
        --build) build=$2 ;;
      esac
      shift 2
      ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
((EUID == 0)) || die "needs root (network namespaces)"
[[ -x "$stage/bin/hvdrun" ]] || die "no hvdrun in $stage/bin (build, then cmake --install build --prefix $stage)"
[[ -x "$build/bin/hvdrun-test-cluster" ]] || die "no $build/bin/hvdrun-test-cluster: build it, or pass --build DIR"
[[ "$link_rate" =~ ^[0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)$ ]] || die "--link-rate: expected a tc rate such as 1gbit"

out=$(mktemp -d)
cluster_pid=""
cleanup() {
  if [[ -n "$cluster_pid" ]]; then
    kill -INT "$cluster_pid" 2>/dev/null || true
    wait "$cluster_pid" 2>/dev/null || true
  fi
  rm -rf "$out"
}
trap cleanup EXIT

log="$out/cluster.log"
"$build/bin/hvdrun-test-cluster" up 2 >"$log" 2>&1 &
cluster_pid=$!
for ((i = 0; i < 300; ++i)); do
  grep -q '^Ctrl-C' "$log" && break
  kill -0 "$cluster_pid" 2>/dev/null || { cat "$log" >&2; die "the test cluster did not start"; }
  sleep 0.1
done
run_id="$(sed -n 's/^hvdrun test cluster \([^:]*\):.*/\1/p' "$log")"
[[ -n "$run_id" ]] || { cat "$log" >&2; die "the test cluster did not say its run id"; }
run_dir="/run/hvdrun-cluster/$run_id"
for server in server1 server2; do
  mapfile -t links < <(ip -n "$run_id-$server" -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }')
  for link in "${links[@]}"; do
    [[ "$link" == lo ]] && continue
    ip netns exec "$run_id-$server" tc qdisc replace dev "$link" root tbf rate "$link_rate" burst 512kb \
      latency 50ms || die "tc could not shape $server's $link to $link_rate"
  done
done

tx_bytes() {  # server
  ip -n "$run_id-$1" -s -j link show eth0 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["stats64"]["tx"]["bytes"])'
}
run() {  # mode round
  local json="$out/$1-$2.json"
  local -a mode=()
  [[ "$1" == hierarchical ]] && mode=(--hierarchical-allreduce)
  local before1 before2
  before1=$(tx_bytes server1) before2=$(tx_bytes server2)
  PATH="$stage/bin:$PATH" ip netns exec "$run_id-launcher" "$stage/bin/hvdrun" -np 4 -H server1:2,server2:2 \
    -i "$run_dir/id_ed25519" --ssh-known-hosts "$run_dir/known_hosts" --agent-path "$stage/bin/hvdrun-agent" \
    --network-interface eth0 --gloo "${mode[@]}" "$stage/bin/hvdrun-bench" --replay resnet50 \
    --fusion-threshold-mb 128 --iters "$iters" --warmup "$warmup" --json "$json" >/dev/null 2>"$out/$1-$2.stderr" ||
    { tail -20 "$out/$1-$2.stderr" >&2; die "the $1 run of round $2 failed"; }
  echo "$(($(tx_bytes server1) - before1)) $(($(tx_bytes server2) - before2))" >"$out/$1-$2.tx"
}
for ((round = 1; round <= rounds; ++round)); do
  run flat "$round"
  run hierarchical "$round"
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
