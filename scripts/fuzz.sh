#!/usr/bin/env bash
# Builds hvdrun's libFuzzer targets (tests/fuzz/) with clang in a build directory of their own and
# runs each on its seeds, under AddressSanitizer and UBSan, for a bounded time.
#
#   scripts/fuzz.sh [--seconds N] [--build DIR] [FUZZER ...]
#
#   --seconds N   how long each fuzzer runs (default 60; CI's test `fuzz` gives each 20)
#   --build DIR   the build directory (default build-fuzz); its corpus/NAME/ keeps what each fuzzer
#                 found new, so that every run starts where the last one stopped
#   FUZZER ...    only these (default: every fuzzer of tests/fuzz/CMakeLists.txt)
#   JOBS          compile jobs (default: the machine's cores)
#
# Prints each fuzzer's runs (executions) and the total. Exits 1 when a fuzzer finds a crash, a leak,
# a timeout (an input that takes over 10 s) or runs out of memory: the input is kept in
# DIR/findings/, and the line printed reproduces it (then make it a unit test). Each fuzzer runs in a
# session of its own with stdin from /dev/null, so that an input naming /dev/tty or /dev/stdin (a
# hostfile) cannot wait on the terminal.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=60
build=build-fuzz
fuzzers=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option '$1' (see scripts/fuzz.sh --help)" >&2; exit 2 ;;
    *) fuzzers+=("$1"); shift ;;
  esac
done
case "$seconds" in
  '' | *[!0-9]* | 0) echo "fuzz: --seconds '$seconds': give a whole number of seconds, 1 or more" >&2; exit 2 ;;
esac
build=$(mkdir -p "$build" && cd "$build" && pwd)

clang=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$clang" ] || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz: needs clang++ and libFuzzer's runtime (clang-14 and libclang-rt-14-dev; scripts/install-deps.sh installs them)" >&2
  exit 1
fi

# The fuzzers need the libraries they fuzz and nothing of the rest (no MPI, NCCL, libtorch or Python);
# ccache keeps the objects, as for the other builds of the tree (scripts/build-settings.sh).
export CCACHE_DIR=${CCACHE_DIR:-$(ccache -k cache_dir)} CCACHE_BASEDIR=$root
started=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g" -DHVDRUN_FUZZERS=ON -DHVDRUN_BUILD_TESTS=OFF \
    -DHVDRUN_WITH_MPI=OFF -DHVDRUN_WITH_NCCL=OFF -DHVDRUN_WITH_TRAINER=OFF -DHVDRUN_PYTHON=OFF \
    -DHVDRUN_CLANG_TIDY_TEST=OFF >"$build/configure.log" 2>&1 || {
    tail -n 30 "$build/configure.log"
    echo "fuzz: configuring $build failed ($build/configure.log)" >&2
    exit 1
  }
fi
if ! cmake --build "$build" --target fuzzers -j "${JOBS:-$(nproc)}" >"$build/build.log" 2>&1; then
  grep -n -A8 'error' "$build/build.log" | head -n 60
  echo "fuzz: building the fuzzers failed ($build/build.log)" >&2
  exit 1
fi
echo "fuzz: fuzzers built in $(($(date +%s) - started)) s ($build)"

# fuzzers.txt: "NAME SEED_DIR ..." per fuzzer, written by tests/fuzz/CMakeLists.txt.
mkdir -p "$build/findings"
total=0
failed=()
while read -r name seeds; do
  [ -n "$name" ] || continue
  if [ ${#fuzzers[@]} -gt 0 ] && [[ " ${fuzzers[*]} " != *" $name "* ]]; then continue; fi
  corpus=$build/corpus/$name
  mkdir -p "$corpus"
  log=$build/findings/$name.log
  # shellcheck disable=SC2086  # the seed directories, one word each
  if setsid -w env UBSAN_OPTIONS=print_stacktrace=1 "$build/bin/$name" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/findings/$name-" \
    "$corpus" $seeds </dev/null >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed+=("$name")
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  runs=${runs:-0}
  total=$((total + runs))
  echo "fuzz: $name: $status, $runs runs in $seconds s, corpus of $(find "$corpus" -type f | wc -l) inputs"
  if [ "$status" = FAILED ]; then
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|.*ERROR: libFuzzer)' "$log" | head -n 5 || true
    artifact=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
    echo "fuzz: $name: the whole output is in $log${artifact:+; reproduce with: $build/bin/$name $artifact}"
  fi
done <"$build/fuzzers.txt"
echo "fuzz: $total runs in all"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: found problems: ${failed[*]}"
  exit 1
fi
