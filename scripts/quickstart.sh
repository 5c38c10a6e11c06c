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

if [ "$mode" = test ]; then
  cmake -S . -B "$build_dir" -G Ninja -DHVDRUN_WERROR=ON
  cmake --build "$build_dir" -j "$jobs"
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 1200
  exit
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHVDRUN_BUILD_TESTS=OFF
cmake --build "$build_dir" -j "$jobs"
cmake --install "$build_dir" --prefix "$build_dir/stage" >/dev/null
hvdrun=$build_dir/stage/bin/hvdrun
logs=$build_dir/demo-logs

echo
echo "== hvdrun: 4 ranks on two hosts of this machine (localhost and 127.0.0.1), logs in $logs/"
"$hvdrun" -np 4 -H localhost:2,127.0.0.1:2 --output-filename "$logs" \
  sh -c 'echo "rank $HVDRUN_RANK of $HVDRUN_SIZE on $HVDRUN_HOSTNAME: local rank $HVDRUN_LOCAL_RANK of $HVDRUN_LOCAL_SIZE, cross rank $HVDRUN_CROSS_RANK of $HVDRUN_CROSS_SIZE, MASTER_ADDR=$MASTER_ADDR:$MASTER_PORT"'

echo
echo "== hvdrun --gloo: allreduce bandwidth on 2 ranks, libhvdrun beside Gloo's own allreduce"
"$hvdrun" -np 2 --gloo --results "$build_dir/demo-results" "$build_dir/stage/bin/hvdrun-bench" -b 1M -e 16M -f 4 --baseline

echo
echo "== hvdrun: a failing rank stops the job (the report below is expected; exit code 3 is rank 2's)"
set +e
"$hvdrun" -np 4 sh -c 'if [ "$HVDRUN_RANK" = 2 ]; then echo "rank 2: out of memory" >&2; exit 3; fi; exec sleep 60'
code=$?
set -e
echo "hvdrun exited with $code"
[ "$code" -eq 3 ]
