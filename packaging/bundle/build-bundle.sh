#!/usr/bin/env bash
# Builds hvdrun's relocatable bundle, for Linux machines that are not Debian bookworm (a GPU
# server with a pip or conda PyTorch): README.md, "Install on any other Linux machine".
#
#   bash packaging/bundle/build-bundle.sh [OUT_DIR]          (default build/bundle)
#
# OUT_DIR gets hvdrun-<version>-linux-<arch>.tar.gz, one directory of that name inside:
#   bin/       hvdrun, hvdrun-agent, hvdrun-bench, hvdrun-lab, and hvdrun-setup, which builds
#              hvdrun-trainer and hvdrun.torch there against the machine's own torch
#   lib/       libhvdrun, its backend modules (lib/hvdrun/backends/, once the backends are
#              modules), and every library that they and the programs need beyond the base system
#              (glibc, libstdc++, libgcc): each ELF file's RUNPATH is $ORIGIN-relative, so that the
#              directory works wherever it is unpacked. lib/cmake/hvdrun (find_package(hvdrun)),
#              lib/pkgconfig/hvdrun.pc (relative to its own place: ${pcfiledir}), lib/python/hvdrun
#   include/   libhvdrun's public headers
#   libexec/   hvdrun/hvdrun-nccl-tests, the NCCL backend's tests, where it is built
#   share/     hvdrun-setup's sources (share/hvdrun/src), the horovod.torch alias, the GPU check
#              (share/hvdrun/scripts/gpu-check.sh), the lab's experiment files and the licenses of
#              what the bundle carries (share/doc/hvdrun)
# Never carried, the machine's own: Open MPI (hvdrun --mpi runs the machine's mpirun with its
# libmpi), NCCL (hvdrun-setup links the one the machine's torch uses) and the driver's libcuda.
# Where CUDA was found, the CUDA runtime libcudart is carried (hvdrun-bench's device buffers).
#
# The build: a clean copy of the tree (packaging/lib/source-copy.sh) in OUT_DIR/source, from which
# everything in the bundle comes (the files git tracks, as they are in the working tree), built with
# the flags the Debian packages are built with (packaging/debian/buildflags.mk: -O2, hardening;
# build type None), every backend the build finds, through ccache with the settings of
# scripts/quickstart.sh: the copy's build directory lies as deep in it as the test build's in the
# tree, so that a build after `quickstart.sh test` takes its objects from the cache. No tests,
# trainer or Python extension: those are built on the target machine (hvdrun-setup).
#
# Environment: JOBS=N parallel jobs (default every CPU); HVDRUN_BUNDLE_CMAKE_ARGS more configure
# arguments (e.g. -DHVDRUN_WITH_NCCL=OFF); HVDRUN_BUNDLE_COMMIT the commit the tree is of, where it
# is not a git checkout but a copy of one (copy_source_tree: the Debian bullseye build root of
# packaging/bundle/build-bundle-bullseye.sh, which has no git).
#
# Exit status: 0 built; 1 a missing tool or a failed build; 3 a needed library not found here;
# 4 a program in bin/ or a library in lib/ needs one of the machine's own libraries (Open MPI, NCCL,
# the driver), which only a backend module (lib/hvdrun/) or a helper program that runs for one
# backend alone (libexec/) may; 5 the tarball is not under the size limit (60 MB); 6 a file needs a
# newer glibc, libstdc++ or libgcc_s than the bundle's baseline (packaging/bundle/symbol-versions.sh;
# OUT_DIR/symbol-versions.txt has the table of every file).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$root/build/bundle}")
size_limit_mb=60

# shellcheck source=packaging/lib/source-copy.sh
. "$root/packaging/lib/source-copy.sh"
# shellcheck source=packaging/bundle/elf-files.sh
. "$root/packaging/bundle/elf-files.sh"
for tool in cmake ninja ccache patchelf readelf ldd dpkg-buildflags; do
  if ! command -v "$tool" >/dev/null; then
    echo "build-bundle: $tool not found: run scripts/install-deps.sh" >&2
    exit 1
  fi
done

version=$(project_version "$root")
arch=$(uname -m)
name=hvdrun-$version-linux-$arch
tree=$out/source/hvdrun-$version
stage=$out/stage/$name
tarball=$out/$name.tar.gz
jobs=${JOBS:-$(nproc)}
start=$SECONDS
step() { echo "build-bundle: [$((SECONDS - start)) s] $*"; }

# --- 1. build -------------------------------------------------------------------------------------
commit=${HVDRUN_BUNDLE_COMMIT:-$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)}
step "hvdrun $version (commit $commit), $jobs jobs, in $tree/build"
if [ -n "${HVDRUN_BUNDLE_COMMIT:-}" ]; then
  rm -rf "$tree"
  mkdir -p "$tree"
  cp -a "$root/." "$tree/"
else
  copy_source_tree "$root" "$tree"
fi
export CCACHE_DIR=${CCACHE_DIR:-$(ccache -k cache_dir)}
export CCACHE_BASEDIR=$tree
export CCACHE_IGNOREOPTIONS=-Werror
buildflag() { (. "$tree/packaging/debian/buildflags.mk" && dpkg-buildflags --get "$1"); }
ldflags=$(buildflag LDFLAGS)
# shellcheck disable=SC2206  # more arguments, split as words
extra_args=(${HVDRUN_BUNDLE_CMAKE_ARGS:-})
(
  cd "$tree"
  cmake -S . -B build -G Ninja -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_CXX_FLAGS="$(buildflag CXXFLAGS) $(buildflag CPPFLAGS)" -DCMAKE_EXE_LINKER_FLAGS="$ldflags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" -DCMAKE_MODULE_LINKER_FLAGS="$ldflags" \
    -DCMAKE_BUILD_TYPE=None -DCMAKE_INSTALL_LIBDIR=lib -DHVDRUN_BUILD_TESTS=OFF -DHVDRUN_WERROR=OFF \
    -DHVDRUN_WITH_TRAINER=OFF -DHVDRUN_PYTHON=OFF "${extra_args[@]}" >"$out/configure.log"
) || {
  cat "$out/configure.log" >&2
  exit 1
}
# "-- libhvdrun: backends gloo mpi nccl (modules in lib/hvdrun/backends)": the names alone.
backends=$(sed -n 's/^-- *libhvdrun: backends \([a-z0-9 ]*[a-z0-9]\).*/\1/p' "$out/configure.log")
if [ -z "$backends" ]; then
  echo "build-bundle: $out/configure.log: no '-- libhvdrun: backends ...' line (runtime/CMakeLists.txt prints it)" >&2
  exit 1
fi
sed -n 's/^-- *libhvdrun: not built: /build-bundle: backend not built: /p' "$out/configure.log"
LC_ALL=C.UTF-8 cmake --build "$tree/build" -j "$jobs"

# --- 2. the install tree --------------------------------------------------------------------------
step "cmake --install --strip into $stage (backends: $backends)"
rm -rf "$out/stage" "$tarball"
cmake --install "$tree/build" --prefix "$stage" --strip >/dev/null
install -m 755 "$tree/packaging/bundle/hvdrun-setup" "$stage/bin/hvdrun-setup"

# --- 3. the libraries they need beyond the base system --------------------------------------------
step "libraries beyond the base system, into lib/"
# libz.so.1 also for hvdrun-trainer, which hvdrun-setup links against it (the MNIST reader).
bundle_gather_libraries "$stage" "$out/libraries.txt" libz.so.1

# --- 4. RUNPATHs relative to each file ------------------------------------------------------------
step "RUNPATH \$ORIGIN-relative in every ELF file"
bundle_set_runpaths "$stage"

# --- 5. what hvdrun-setup builds from, Python, CMake and pkg-config files ---------------------------
step "sources for hvdrun-setup, Python package, pkg-config file, documents"
src=$stage/share/hvdrun/src
# hvdrun-trainer: the trainer's and examples/shared's files but their tests; hvdrun._C's files.
mkdir -p "$src"
(cd "$tree" && find examples/trainer examples/shared \( -name '*.cc' -o -name '*.h' \) \
  ! -name '*_test.cc' ! -name '*_test_files.*' -print0 | tar --null -T - -cf -) | tar -C "$src" -xf -
mkdir -p "$src/python"
cp "$tree"/python/*.cc "$tree"/python/*.h "$src/python/"
# The header-only libraries the trainer includes, and zlib's headers (libz.so.1 is in lib/).
third_party=$src/include
mkdir -p "$third_party"
: >"$out/headers.txt"
header_path() { # header_path HEADER: where the compiler finds <HEADER>
  local path
  path=$(printf '#include <%s>\n' "$1" | c++ -std=c++17 -x c++ -M - 2>/dev/null | tr -s ' ' '\n' |
    awk -v header="/$1" 'substr($0, length($0) - length(header) + 1) == header && !found { print; found = 1 }')
  if [ -z "$path" ]; then
    echo "build-bundle: <$1> not found: run scripts/install-deps.sh" >&2
    exit 1
  fi
  echo "$path"
}
for header in CLI/CLI.hpp nlohmann/json.hpp; do
  path=$(header_path "$header")
  cp -a "$(dirname "$path")" "$third_party/"
  echo "$path" >>"$out/headers.txt"
done
for header in zlib.h zconf.h; do
  path=$(header_path "$header")
  cp "$path" "$third_party/"
  echo "$path" >>"$out/headers.txt"
done
# hvdrun.torch: the package beside the place hvdrun-setup builds hvdrun._C into; the alias apart.
mkdir -p "$stage/lib/python" "$stage/share/hvdrun/horovod-compat"
(cd "$tree/python" && find hvdrun -name '*.py' -print0 | tar --null -T - -cf -) | tar -C "$stage/lib/python" -xf -
(cd "$tree/python/horovod_compat" && find horovod -name '*.py' -print0 | tar --null -T - -cf -) |
  tar -C "$stage/share/hvdrun/horovod-compat" -xf -
# pkg-config: the prefix relative to the file's own directory; programs linked through it find
# libhvdrun where the bundle lies (RUNPATH), as the bundle's own programs do.
pc=$stage/lib/pkgconfig/hvdrun.pc
# shellcheck disable=SC2016  # pkg-config's variables
sed -i -e 's|^prefix=.*|prefix=${pcfiledir}/../..|' \
  -e 's|^Libs: -L${libdir} |Libs: -L${libdir} -Wl,-rpath,${libdir} |' "$pc"
# shellcheck disable=SC2016
if ! grep -q '^prefix=${pcfiledir}/../..$' "$pc" || ! grep -q -- '-Wl,-rpath,${libdir}' "$pc"; then
  echo "build-bundle: $pc: no 'prefix=' or 'Libs: -L\${libdir} ' line to make relocatable" >&2
  exit 1
fi
if grep -rq -- "$stage" "$stage/lib/cmake" "$pc"; then
  echo "build-bundle: the CMake or pkg-config files name the staging directory $stage:" >&2
  grep -rl -- "$stage" "$stage/lib/cmake" "$pc" >&2
  exit 1
fi
# What hvdrun-setup reads: the backends libhvdrun was built with (hvdrun.torch's *_built()), and
# the machine's own libraries a file of the bundle needs (libnccl.so.2: setup links the machine's).
machine_libs=$(awk '$1 == "machine" { print $3 }' "$out/libraries.txt" | sort -u | tr '\n' ' ')
# And the Gloo it carries, by its package's version: the host facts' "gloo" (hvdrun --check).
gloo_version=""
gloo_file=$(awk '$1 == "carried" && $2 == "libgloo.so.0" { print $3; exit }' "$out/libraries.txt")
if [ -n "$gloo_file" ]; then
  gloo_package=$(dpkg-query -S "$gloo_file" 2>/dev/null | head -n 1 | cut -d: -f1)
  if [ -n "$gloo_package" ]; then
    gloo_version=$(dpkg-query -W -f='${Version}' "$gloo_package")
  fi
fi
cat >"$stage/share/hvdrun/bundle.env" <<ENV
# Written by packaging/bundle/build-bundle.sh; read by bin/hvdrun-setup and by the host facts.
HVDRUN_BUNDLE_VERSION="$version"
HVDRUN_BUNDLE_COMMIT="$commit"
HVDRUN_BUNDLE_BACKENDS="$backends"
HVDRUN_BUNDLE_MACHINE_LIBS="${machine_libs% }"
HVDRUN_BUNDLE_GLOO="$gloo_version"
ENV
doc=$stage/share/doc/hvdrun
mkdir -p "$doc/examples/allreduce"
cp "$tree/configs/"*.yaml "$tree/configs/hosts-lab7.txt" "$doc/examples/"
cp "$tree/examples/allreduce/allreduce.cc" "$tree/examples/allreduce/CMakeLists.txt" "$doc/examples/allreduce/"
cp "$tree/packaging/bundle/README.bundle" "$stage/README"
# The one GPU check (scripts/gpu-check.sh finds the bundle above itself) and its Python scripts.
mkdir -p "$stage/share/hvdrun/scripts"
cp -r "$tree/scripts/gpu-check.sh" "$tree/scripts/gpu" "$stage/share/hvdrun/scripts/"
# Its autotune rows run the autotune benchmark over NCCL.
mkdir -p "$stage/share/hvdrun/scripts/bench"
cp "$tree/scripts/bench/autotune_replay.sh" "$tree/scripts/bench/autotune_analysis.py" "$tree/scripts/bench/bench_lib.sh" \
  "$stage/share/hvdrun/scripts/bench/"
cp "$tree/examples/pytorch_synthetic_benchmark/pytorch_synthetic_benchmark.py" "$stage/share/hvdrun/scripts/gpu/"
bundle_licenses "$out/libraries.txt" "$out/headers.txt" "$doc"

# --- 6. checks ------------------------------------------------------------------------------------
step "checks: every library found in the bundle or the base system"
bundle_check_closure "$stage"
step "checks: no file needs more of glibc and the GCC runtime than the baseline (packaging/bundle/baseline.env)"
bash "$tree/packaging/bundle/symbol-versions.sh" --baseline "$tree/packaging/bundle/baseline.env" "$stage" \
  >"$out/symbol-versions.txt" || {
  status=$?
  cat "$out/symbol-versions.txt"
  exit "$status"
}
tail -n2 "$out/symbol-versions.txt"

step "tarball"
tar -C "$out/stage" --owner=0 --group=0 --numeric-owner -czf "$tarball" "$name"
size=$(stat -c %s "$tarball")
size_mb=$(((size + 1048575) / 1048576))
if [ "$size" -ge $((size_limit_mb * 1048576)) ]; then
  echo "build-bundle: $tarball is $size_mb MB, over the limit of $size_limit_mb MB" >&2
  exit 5
fi
step "$tarball: $size_mb MB ($(du -sm "$stage" | cut -f1) MB unpacked)"
