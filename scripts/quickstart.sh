#!/usr/bin/env bash
# The README's two quick-start commands, on a fresh Debian bookworm machine (as root):
#   bash scripts/quickstart.sh demo   install what the demo needs, build what it runs, run the main
#                                     job on this machine
#   bash scripts/quickstart.sh test   install what is missing, build everything, run the whole test suite
# and the check that the demo's build is quiet:
#   bash scripts/quickstart.sh release-check   the demo's Release build with warnings as errors
#                                              (fails on any compiler warning the demo would print)
# BUILD_DIR (default: build) chooses the build directory; JOBS (default: every core) the build's jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-demo}
build_dir=${BUILD_DIR:-build}

case "$mode" in
  demo | test | release-check) ;;
  *)
    echo "usage: bash scripts/quickstart.sh demo|test|release-check" >&2
    exit 2
    ;;
esac

# Each stage's wall time is printed as it ends ("quickstart: STAGE: N s") and all of them at the
# end, so that a CI log says where its time went.
stage_start=$SECONDS
stage_times=""
stage_done() {
  local seconds=$((SECONDS - stage_start))
  echo "quickstart: $1: $seconds s"
  stage_times+="${stage_times:+, }$1 $seconds s"
  stage_start=$SECONDS
}

# The demo and its build check install the demo's packages only; the tests every set.
if [ "$mode" = test ]; then
  bash scripts/install-deps.sh
else
  bash scripts/install-deps.sh demo
fi
stage_done install
jobs=${JOBS:-$(nproc)}

# Each mode's compiler flags, cache settings and options: scripts/build-settings.sh.
. scripts/build-settings.sh
hvdrun_build_settings "$PWD" "$mode"
cmake -S . -B "$build_dir" "${hvdrun_cmake_args[@]}"
LC_ALL=C.UTF-8 cmake --build "$build_dir" -j "$jobs"
stage_done configure+build
if [ "$mode" = test ]; then
  # Each test's time in a JUnit file, summed by group and listed after the run (scripts/ctest_times.py).
  junit=$(realpath -m "$build_dir")/ctest-times.xml
  status=0
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 1200 --output-junit "$junit" || status=$?
  stage_done tests
  echo "quickstart: $stage_times"
  # Last, so that the log ends with the count of tests passed, failed and skipped.
  python3 scripts/ctest_times.py "$build_dir" "$junit" || true
  exit "$status"
fi
if [ "$mode" = release-check ]; then
  echo "quickstart: $stage_times"
  exit
fi

cmake --install "$build_dir" --prefix "$build_dir/stage" >/dev/null
bin=$build_dir/stage/bin
results=$build_dir/demo-results

echo
echo "== hvdrun: 4 ranks on this machine, each printing its place in the job"
"$bin/hvdrun" -np 4 sh -c 'echo "rank $HVDRUN_RANK of $HVDRUN_SIZE, local rank $HVDRUN_LOCAL_RANK on $HVDRUN_HOSTNAME"'

echo
echo "== hvdrun-lab: configs/demo.yaml, ResNet-18 training over Gloo and MPI on 1 and 2 processes"
echo "   (a rerun keeps the runs already made; results in $results/demo/)"
"$bin/hvdrun-lab" run configs/demo.yaml --results "$results"
"$bin/hvdrun-lab" report "$results/demo"

stage_done "the demo's runs and report"

echo
echo "== the speedup table of $results/demo/report.md (report.html has the charts)"
sed -n '/^## Speedup/,/^Step time and throughput per worker:/p' "$results/demo/report.md" | sed '$d'
echo "quickstart: $stage_times"
