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

# Both modes compile with the flags the Debian packages are built with (dpkg-buildflags with
# packaging/debian/buildflags.mk: hardening, -g1 line tables), through ccache. The package test's
# build compiles the same files with the same arguments in a copy of this tree, under it: with the
# settings below, ccache gives it the test build's objects instead of compiling them again.
#   CCACHE_DIR           named, as debhelper gives the package build another HOME
#   CCACHE_BASEDIR       paths under this tree are hashed relative to the build directory
#   CCACHE_IGNOREOPTIONS the test build's -Werror changes no object; the package build has none
# and the builds run with LC_ALL=C.UTF-8, as debhelper's do: ccache keys hold the locale, in which
# the compiler writes its messages.
export CCACHE_DIR=${CCACHE_DIR:-$(ccache -k cache_dir)}
export CCACHE_BASEDIR=$PWD
export CCACHE_IGNOREOPTIONS=-Werror
export CMAKE_CXX_COMPILER_LAUNCHER=ccache
buildflag() { (. packaging/debian/buildflags.mk && dpkg-buildflags --get "$1"); }
ldflags=$(buildflag LDFLAGS)
# Each mode sets every option it depends on, so that the other mode's cached settings in the same
# build directory (a Release build without tests, or warnings as errors) never carry over.
flags=(-G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_FLAGS="$(buildflag CXXFLAGS) $(buildflag CPPFLAGS)"
  -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" -DCMAKE_MODULE_LINKER_FLAGS="$ldflags")
if [ "$mode" = test ]; then
  # Build type None, as Debian's: the flags above and no others.
  cmake -S . -B "$build_dir" "${flags[@]}" -DCMAKE_BUILD_TYPE=None -DHVDRUN_BUILD_TESTS=ON -DHVDRUN_WERROR=ON
  LC_ALL=C.UTF-8 cmake --build "$build_dir" -j "$jobs"
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 1200
  exit
fi

cmake -S . -B "$build_dir" "${flags[@]}" -DCMAKE_BUILD_TYPE=Release -DHVDRUN_BUILD_TESTS=OFF -DHVDRUN_WERROR=OFF
LC_ALL=C.UTF-8 cmake --build "$build_dir" -j "$jobs"
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
