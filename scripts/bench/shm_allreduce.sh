#!/usr/bin/env bash
# libhvdrun's shared-memory allreduce (runtime/shm/) against Open MPI's shared-memory allreduce and
# Gloo over loopback, 2 ranks on this machine, in the same rounds, and what fraction of a memory copy
# each reaches. Per round (runs in this order, each after its own warm-up iterations):
#   hvdrun -np 2 --mpi hvdrun-bench -b 64M -e 64M --iters 10 --warmup 3 --baseline --json F
#       libhvdrun's allreduce (path shm) and Open MPI's own MPI_Allreduce (--baseline: "mpi raw")
#   hvdrun -np 2 --gloo hvdrun-bench -b 64M -e 64M --iters 10 --warmup 3 --baseline --json F
#       libhvdrun's allreduce (path shm) and Gloo's own ring allreduce over loopback ("gloo raw")
#   hvdrun -np 2 --BACKEND --shared-memory off hvdrun-bench -b 64M -e 64M --iters 10 --warmup 3 --json F
#       libhvdrun's allreduce over Gloo and over MPI (path gloo, mpi), as before the shared-memory path
#   hvdrun_wire_format_bench --mib 64 --rounds 5      memcpy of 64 MiB on one core (GB/s)
#   hvdrun -np 2 --BACKEND [--shared-memory off] hvdrun-bench --replay resnet50 --fusion-threshold-mb 128
#          --iters 10 --warmup 3 --json F              the ResNet-50 gradient step, fused, each path and backend
# Prints the medians over rounds of busbw (GB/s) and step time, and their ratios; asserts nothing about
# the figures (the machine is shared: compare the ratios). docs/benchmarks.md has the results.
#
# Usage: scripts/bench/shm_allreduce.sh [--rounds N] [--stage DIR] [--build DIR]
#   --rounds N    rounds (default 5)
#   --stage DIR   an installed hvdrun (default build/stage: cmake --install build --prefix build/stage)
#   --build DIR   the build tree holding bin/hvdrun_wire_format_bench (default build)
set -euo pipefail

die() {
  echo "shm_allreduce.sh: $*" >&2
  exit 2
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=5 stage="$repo_root/build/stage" build="$repo_root/build"
while (($# > 0)); do
  case "$1" in
    --rounds) (($# >= 2)) || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --stage) (($# >= 2)) || die "--stage needs a directory"; stage=$2; shift 2 ;;
    --build) (($# >= 2)) || die "--build needs a directory"; build=$2; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[ -x "$stage/bin/hvdrun" ] || die "no hvdrun in $stage/bin (build, then cmake --install build --prefix $stage)"
[ -x "$build/bin/hvdrun_wire_format_bench" ] || die "no $build/bin/hvdrun_wire_format_bench (build it)"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export PATH="$stage/bin:$PATH"
sweep=(hvdrun-bench -b 64M -e 64M --iters 10 --warmup 3)
replay=(hvdrun-bench --replay resnet50 --fusion-threshold-mb 128 --iters 10 --warmup 3)
for ((round = 1; round <= rounds; ++round)); do
  hvdrun -np 2 --mpi "${sweep[@]}" --baseline --json "$out/mpi-$round.json" >/dev/null
  hvdrun -np 2 --gloo "${sweep[@]}" --baseline --json "$out/gloo-$round.json" >/dev/null
  hvdrun -np 2 --gloo --shared-memory off "${sweep[@]}" --json "$out/noshm-$round.json" >/dev/null
  hvdrun -np 2 --mpi --shared-memory off "${sweep[@]}" --json "$out/noshm-mpi-$round.json" >/dev/null
  "$build/bin/hvdrun_wire_format_bench" --mib 64 --rounds 5 | awk '$1 == "memcpy" {print $2}' >"$out/memcpy-$round"
  hvdrun -np 2 --gloo "${replay[@]}" --json "$out/replay-shm-$round.json" >/dev/null
  hvdrun -np 2 --gloo --shared-memory off "${replay[@]}" --json "$out/replay-gloo-$round.json" >/dev/null
  hvdrun -np 2 --mpi --shared-memory off "${replay[@]}" --json "$out/replay-mpi-$round.json" >/dev/null
done

/usr/bin/python3 - "$out" "$rounds" <<'PYTHON'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(name, r):
    return json.load(open(os.path.join(out, f"{name}-{r}.json")))
def median(values):
    return statistics.median(values)
R = range(1, rounds + 1)
for name in ("mpi", "gloo"):
    for r in R:
        assert load(name, r)["allreduce_path"] == "shm", f"{name} run {r} did not reduce through shm"
for r in R:
    assert load("noshm", r)["allreduce_path"] == "gloo" and load("noshm-mpi", r)["allreduce_path"] == "mpi"
    assert load("replay-shm", r)["allreduce_path"] == "shm" and load("replay-gloo", r)["allreduce_path"] == "gloo"
    assert load("replay-mpi", r)["allreduce_path"] == "mpi"
result = lambda d: d["results"][0]
shm = median([result(load(n, r))["busbw_gbps"] for n in ("mpi", "gloo") for r in R])
mpi_raw = median([result(load("mpi", r))["baseline_busbw_gbps"] for r in R])
gloo_raw = median([result(load("gloo", r))["baseline_busbw_gbps"] for r in R])
gloo_runtime = median([result(load("noshm", r))["busbw_gbps"] for r in R])
mpi_runtime = median([result(load("noshm-mpi", r))["busbw_gbps"] for r in R])
copy = median([float(open(os.path.join(out, f"memcpy-{r}")).read()) for r in R])
print(f"64 MiB float32 sum, 2 ranks: median busbw over {rounds} rounds (GB/s); memcpy {copy:.2f} GB/s")
print("| path | busbw | of a copy | shm / this |")
print("|---|---|---|---|")
for label, value in (("libhvdrun shm", shm), ("Open MPI raw (shared memory)", mpi_raw),
                     ("Gloo raw (loopback)", gloo_raw), ("libhvdrun over Gloo (--shared-memory off)", gloo_runtime),
                     ("libhvdrun over MPI (--shared-memory off)", mpi_runtime)):
    print(f"| {label} | {value:.2f} | {value / copy:.2f} | {shm / value:.2f} |")
step = lambda name: median([load(name, r)["settings"][0]["step_ms"] for r in R])
shm_step, gloo_step, mpi_step = step("replay-shm"), step("replay-gloo"), step("replay-mpi")
print(f"\nresnet50 replay, 2 ranks, fusion 128 MiB: median step over {rounds} rounds")
print("| path | step (ms) |")
print("|---|---|")
print(f"| shm | {shm_step:.1f} |")
print(f"| gloo (--shared-memory off) | {gloo_step:.1f} |")
print(f"| mpi (--shared-memory off) | {mpi_step:.1f} |")
print(f"\nshm / gloo step: {shm_step / gloo_step:.2f}; shm / mpi step: {shm_step / mpi_step:.2f}")
PYTHON
