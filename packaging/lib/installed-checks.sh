# shellcheck shell=bash
# What the package test (packaging/test-debs.sh) and the bundle test (packaging/bundle/test-bundle.sh)
# both check of an installed hvdrun in their clean root: each copies this file there as
# /tmp/installed-checks.sh, and the scripts it runs there (in_root: bash -euo pipefail, hvdrun's
# programs on PATH, in a scratch directory) source it after setting installed_checks_name, the
# test's name, which starts each message.
#
#   expect FILE TEXT             FILE has the line TEXT; otherwise says so, prints FILE, exits 1
#   check_gloo_bench             hvdrun -np 2 --gloo hvdrun-bench (a few small sizes) writes busbw
#                                figures to gloo.json
#   check_lab_experiment NAME    hvdrun-lab validates, runs (1 and 2 ranks of hvdrun-bench) and
#                                reports a small experiment named NAME, in results/NAME
# shellcheck disable=SC2154  # installed_checks_name: set by the script that sources this file
expect() {
  grep -qxF -- "$2" "$1" || {
    echo "$installed_checks_name: expected the line '$2' in:"
    cat "$1"
    exit 1
  }
}

check_gloo_bench() {
  hvdrun -np 2 --gloo hvdrun-bench -b 1K -e 64K -f 8 --iters 5 --warmup 1 --json gloo.json | tee gloo.out
  grep -q '"busbw_gbps"' gloo.json
}

check_lab_experiment() {
  local name=$1
  cat >experiment.yaml <<YAML
name: $name
program: hvdrun-bench
args: [-b, 4K, -e, 16K, -f, 4, --iters, 5, --warmup, 1]
figures: {step_time: time_us, step_time_scale: 1.0e-6, throughput: busbw_gbps, throughput_unit: GB/s}
matrix:
  np: [1, 2]
repeats: 1
timeout: 60
YAML
  hvdrun-lab validate experiment.yaml
  hvdrun-lab run experiment.yaml --results results >lab.out || {
    cat lab.out
    exit 1
  }
  expect lab.out "hvdrun-lab: 2 runs: 2 ok (0 kept from before), 0 failed"
  hvdrun-lab report "results/$name"
  test -s "results/$name/report.md"
  grep -q '^## Speedup' "results/$name/report.md"
}
