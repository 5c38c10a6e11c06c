#!/usr/bin/env bash
# The relocatable bundle's allreduce bandwidth against the Debian packages' on this machine: the
# bundle's hvdrun and hvdrun-bench (its own libhvdrun and carried libraries, through $ORIGIN) and
# the .debs' (unpacked with dpkg-deb -x, run with LD_LIBRARY_PATH, with this machine's libraries),
# 2 local ranks, over Gloo and over MPI, run by run in turn (the order alternates every round),
# after one warm-up run of each:
#   hvdrun -np 2 --BACKEND hvdrun-bench -b 1M -e 64M -f 4 --iters 20 --warmup 3 --json FILE
# Prints, per backend and size, the median busbw of each, the ratio of the medians (bundle / .deb)
# and the median, min and max of the ratios within a round (the two runs of a round meet the same
# load); asserts nothing about the figures (the machine is shared: compare the ratios). With
# --replay MODEL, also a training step's gradients, in rounds of their own after the sweeps:
#   hvdrun -np 2 --BACKEND hvdrun-bench --replay MODEL --iters 20 --warmup 3 --json FILE
# and the same figures of its step time (summary.step_ms; the ratio .deb / bundle, so that above 1
# is the bundle faster, as for busbw).
# docs/benchmarks.md has the results.
#
# Usage: scripts/bench/bundle_busbw.sh --bundle DIR --debs DIR [--rounds N] [--backends LIST]
#                                      [--replay MODEL]
#   --bundle DIR      an unpacked bundle (packaging/bundle/build-bundle.sh): DIR/bin/hvdrun
#   --debs DIR        packaging/build-debs.sh's output: hvdrun_*.deb and libhvdrun0_*.deb
#   --rounds N        rounds (default 5)
#   --backends LIST   comma-separated (default gloo,mpi)
#   --replay MODEL    also hvdrun-bench --replay MODEL (resnet18, resnet50, vgg16), as many rounds
set -euo pipefail

die() {
  echo "bundle_busbw.sh: $*" >&2
  exit 2
}

bundle="" debs="" rounds=5 backends=gloo,mpi replay=""
while (($# > 0)); do
  case "$1" in
    --bundle) (($# >= 2)) || die "--bundle needs a directory"; bundle=$2; shift 2 ;;
    --debs) (($# >= 2)) || die "--debs needs a directory"; debs=$2; shift 2 ;;
    --rounds) (($# >= 2)) || die "--rounds needs a value"; rounds=$2; shift 2 ;;
    --backends) (($# >= 2)) || die "--backends needs a list"; backends=$2; shift 2 ;;
    --replay) (($# >= 2)) || die "--replay needs a model"; replay=$2; shift 2 ;;
    -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
if ! [[ "$rounds" =~ ^[0-9]+$ ]] || ((rounds < 1)); then die "--rounds: expected a whole number >= 1, got '$rounds'"; fi
[[ -x "$bundle/bin/hvdrun" ]] || die "--bundle: no bin/hvdrun in '$bundle'"
shopt -s nullglob
deb_files=("$debs"/hvdrun_*.deb "$debs"/libhvdrun0_*.deb)
((${#deb_files[@]} == 2)) || die "--debs: expected one hvdrun_*.deb and one libhvdrun0_*.deb in '$debs'"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for deb in "${deb_files[@]}"; do dpkg-deb -x "$deb" "$scratch/deb"; done
deb_libdir=$(dirname "$(find "$scratch/deb" -name 'libhvdrun.so.*' -type f | head -n1)")

# run KIND BACKEND OUT [ARGS]: one hvdrun-bench run of the bundle's or the .debs' programs, of the
# size sweep, or of ARGS where given.
run() {
  local bench_args=(-b 1M -e 64M -f 4 --iters 20 --warmup 3)
  if (($# > 3)); then bench_args=("${@:4}"); fi
  bench_args+=(--json "$3")
  if [ "$1" = bundle ]; then
    "$bundle/bin/hvdrun" -np 2 "--$2" "$bundle/bin/hvdrun-bench" "${bench_args[@]}" >/dev/null
  else
    LD_LIBRARY_PATH=$deb_libdir "$scratch/deb/usr/bin/hvdrun" -np 2 "--$2" "$scratch/deb/usr/bin/hvdrun-bench" \
      "${bench_args[@]}" >/dev/null
  fi
}

# rounds BACKEND NAME [ARGS]: a warm-up run of each, then the rounds, the order alternating; the
# results in NAME-KIND-ROUND.json.
rounds() {
  local backend=$1 name=$2 round kind order
  run bundle "$backend" "$scratch/warmup.json" "${@:3}"
  run deb "$backend" "$scratch/warmup.json" "${@:3}"
  for ((round = 1; round <= rounds; round++)); do
    if ((round % 2)); then order=(bundle deb); else order=(deb bundle); fi
    for kind in "${order[@]}"; do run "$kind" "$backend" "$scratch/$name-$kind-$round.json" "${@:3}"; done
  done
}

IFS=, read -r -a backend_list <<<"$backends"
for backend in "${backend_list[@]}"; do rounds "$backend" "$backend"; done
if [ -n "$replay" ]; then
  for backend in "${backend_list[@]}"; do
    rounds "$backend" "$backend-replay" --replay "$replay" --iters 20 --warmup 3
  done
fi

python3 - "$scratch" "$rounds" "$replay" "${backend_list[@]}" <<'PYTHON'
import json, statistics, sys
scratch, rounds, replay, backends = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
def busbw(backend, kind, round_):
    with open(f"{scratch}/{backend}-{kind}-{round_}.json") as f:
        return {r["bytes"]: r["busbw_gbps"] for r in json.load(f)["results"]}
print(f"{rounds} rounds; busbw in GB/s, medians over the rounds")
print(f"{'backend':8} {'bytes':>9} {'bundle':>8} {'.deb':>8} {'ratio':>6}   per-round ratios: median (min..max)")
for backend in backends:
    runs = {kind: [busbw(backend, kind, r) for r in range(1, rounds + 1)] for kind in ("bundle", "deb")}
    for size in sorted(runs["bundle"][0]):
        b = statistics.median(run[size] for run in runs["bundle"])
        d = statistics.median(run[size] for run in runs["deb"])
        ratios = [rb[size] / rd[size] for rb, rd in zip(runs["bundle"], runs["deb"])]
        print(f"{backend:8} {size:>9} {b:8.3f} {d:8.3f} {b / d:6.2f}   "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})")
if replay:
    def step_ms(backend, kind, round_):
        with open(f"{scratch}/{backend}-replay-{kind}-{round_}.json") as f:
            return json.load(f)["summary"]["step_ms"]
    print(f"--replay {replay}: step time in ms, medians over the rounds; ratio .deb / bundle")
    print(f"{'backend':8} {'bundle':>8} {'.deb':>8} {'ratio':>6}   per-round ratios: median (min..max)")
    for backend in backends:
        runs = {kind: [step_ms(backend, kind, r) for r in range(1, rounds + 1)] for kind in ("bundle", "deb")}
        b, d = statistics.median(runs["bundle"]), statistics.median(runs["deb"])
        ratios = [rd / rb for rb, rd in zip(runs["bundle"], runs["deb"])]
        print(f"{backend:8} {b:8.2f} {d:8.2f} {d / b:6.2f}   "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})")
PYTHON
