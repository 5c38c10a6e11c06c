#!/usr/bin/env bash
# The README's two quick-start commands, on a fresh Debian bookworm machine (as root):
#   bash scripts/quickstart.sh demo   install what is missing, build, run the main job on this machine
#   bash scripts/quickstart.sh test   install what is missing, build, run the whole test suite
# BUILD_DIR (default: build) chooses the build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-demo}
build_dir=${BUILD_DIR:-build}

case "$mode" in
  demo | test) ;;
  *)
    echo "usage: bash scripts/quickstart.sh demo|test" >&2
    exit 2
    ;;
esac

bash scripts/install-deps.sh
jobs=$(nproc)

# Each mode sets every option it depends on, so that the other mode's cached settings in the same
# build directory (a Release build without tests, or warnings as errors) never carry over.
if [ "$mode" = test ]; then
  # -g1 (line tables: a failing test's backtrace still names files and lines) instead of -g: full
  # debug information is a third of the compile time, and nothing in a test run reads it.
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHVDRUN_BUILD_TESTS=ON -DHVDRUN_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
  cmake --build "$build_dir" -j "$jobs"
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 1200
  exit
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHVDRUN_BUILD_TESTS=OFF -DHVDRUN_WERROR=OFF
cmake --build "$build_dir" -j "$jobs"
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

echo
echo "== the speedup table of $results/demo/report.md (report.html has the charts)"
sed -n '/^## Speedup/,/^Step time and throughput per worker:/p' "$results/demo/report.md" | sed '$d'
