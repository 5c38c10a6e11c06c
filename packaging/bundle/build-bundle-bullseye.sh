#!/usr/bin/env bash
# Builds the relocatable bundle in a Debian bullseye root (glibc 2.31, GCC 10), so that every file
# of it loads on glibc 2.31 or later with the system libstdc++ of GCC 10 or later (the baseline,
# packaging/bundle/baseline.env; why: docs/bundle-baseline.md). Root only (debootstrap, chroot).
#
#   bash packaging/bundle/build-bundle-bullseye.sh [OUT_DIR]       (default build/bundle)
#
# OUT_DIR gets what packaging/bundle/build-bundle.sh writes (hvdrun-<version>-linux-<arch>.tar.gz
# and its records), built by that script in the root:
# 1. the build root: a bullseye minbase root (packaging/lib/clean-root.sh, the day's tarball of
#    one) with hvdrun's build dependencies from bullseye's archive, and bookworm's header-only
#    CLI11 and nlohmann-json packages (bullseye has no CLI11, and nlohmann-json 3.9, older than the
#    3.10 the build asks for), installed from this machine's apt cache or archive; kept as a tarball
#    of the day beside the minbase one, so that the next build unpacks it (seconds),
# 2. this tree's files (those git tracks, packaging/lib/source-copy.sh) copied into the root and
#    build-bundle.sh run on them there, through ccache with its cache in
#    ~/.cache/hvdrun/ccache-bullseye (outside the tree, so that every clone and CI run on the
#    machine shares it; another compiler than the test build's: its objects are not the test
#    build's), and with the
#    CUDA toolkit of this machine (/usr/local/cuda, read-only) where it has one, for the NCCL
#    backend.
#
# Environment: JOBS and HVDRUN_BUNDLE_CMAKE_ARGS as build-bundle.sh; HVDRUN_CLEAN_ROOT_CACHE as
# clean-root.sh; HVDRUN_BULLSEYE_CCACHE_DIR the compiler cache (default
# ${XDG_CACHE_HOME:-~/.cache}/hvdrun/ccache-bullseye; the paths in it are relative to the copy of the tree, so that checkouts can share one).
# Exit status: build-bundle.sh's; 77 not run as root.
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-$root_dir/build/bundle}")
work=$root_dir/build/bundle-bullseye-root
ccache_dir=$(realpath -m "${HVDRUN_BULLSEYE_CCACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/hvdrun/ccache-bullseye}")

# shellcheck source=packaging/lib/source-copy.sh
. "$root_dir/packaging/lib/source-copy.sh"
# shellcheck source=packaging/lib/clean-root.sh
. "$root_dir/packaging/lib/clean-root.sh"
clean_root_skip_unless_root build-bundle-bullseye "debootstrap, chroot"
clean_root_codename=bullseye
# One build at a time in the one root: a second waits for the first (its lock, held by this shell).
mkdir -p "$work"
exec 8>"$work.lock"
flock 8
clean_root_init build-bundle-bullseye "$work"

# What build-bundle.sh needs (scripts/install-deps.sh's demo set, as bullseye names it, without
# the trainer's libtorch) and the tools it runs; GoogleTest (1.10 there) for the NCCL backend's
# tests, libexec/hvdrun/hvdrun-nccl-tests, which the GPU check runs (where CUDA is here).
build_packages=(g++ cmake ninja-build ccache dpkg-dev patchelf pkg-config
  libboost-dev libssl-dev libgloo-dev libssh-dev libyaml-cpp-dev libopenmpi-dev openmpi-bin zlib1g-dev
  libgtest-dev)
header_packages=(libcli11-dev nlohmann-json3-dev)

# --- 1. the build root -------------------------------------------------------------------------------
cache=${HVDRUN_CLEAN_ROOT_CACHE:-$root_dir/build/clean-root-cache}
export HVDRUN_CLEAN_ROOT_CACHE=$cache
# Named after the packages too, so that a changed list makes a new root the same day.
packages_digest=$(printf '%s\n' "${build_packages[@]}" "${header_packages[@]}" | md5sum | cut -c1-8)
build_root_tarball=$cache/bullseye-build-root-$packages_digest-$(date -u +%F).tar
if [ -f "$build_root_tarball" ]; then
  step "the build root: the day's tarball $build_root_tarball"
  mkdir -p "$clean_root"
  tar --numeric-owner -C "$clean_root" -xf "$build_root_tarball"
else
  step "a bullseye minbase root (debootstrap, or the day's tarball of one)"
  clean_root_make
  clean_root_configure
  step "bullseye's build dependencies; bookworm's ${header_packages[*]}"
  mkdir -p "$clean_root/tmp/debs"
  for package in "${header_packages[@]}"; do
    deb=$(find /var/cache/apt/archives -maxdepth 1 -name "${package}_*_all.deb" | sort -V | tail -n1)
    if [ -z "$deb" ]; then
      (cd "$clean_root/tmp/debs" && apt-get download -q "$package" >/dev/null)
    else
      cp "$deb" "$clean_root/tmp/debs/"
    fi
  done
  cat >"$clean_root/tmp/packages.sh" <<PACKAGES
build_packages=(${build_packages[*]})
PACKAGES
  in_root 900 <<'SCRIPT'
. /tmp/packages.sh
apt-get update -q >/tmp/apt.log 2>&1 || { tr -s ' \r' </tmp/apt.log | tail -n 30; exit 1; }
eatmydata apt-get install -y -q --no-install-recommends "${build_packages[@]}" >>/tmp/apt.log 2>&1 ||
  { tr -s ' \r' </tmp/apt.log | tail -n 30; exit 1; }
dpkg -i /tmp/debs/*.deb >>/tmp/apt.log 2>&1 || { tr -s ' \r' </tmp/apt.log | tail -n 30; exit 1; }
apt-get clean
rm -rf /tmp/debs /tmp/packages.sh /tmp/apt.log /var/lib/apt/lists/*_Packages
SCRIPT
  tar --numeric-owner -C "$clean_root" -cf "$build_root_tarball.tmp" .
  mv "$build_root_tarball.tmp" "$build_root_tarball"
  find "$cache" -maxdepth 1 -name 'bullseye-build-root-*.tar' ! -path "$build_root_tarball" -delete
fi

# --- 2. the bundle, built there -----------------------------------------------------------------------
version=$(project_version "$root_dir")
commit=$(git -C "$root_dir" describe --always --dirty 2>/dev/null || echo unknown)
step "hvdrun $version (commit $commit) copied into the root; build-bundle.sh there, into $out"
copy_source_tree "$root_dir" "$clean_root/src/hvdrun"
mkdir -p "$out" "$ccache_dir"
clean_root_binds=("rw:$out" "rw:$ccache_dir")
cuda=""
if [ -d /usr/local/cuda ]; then
  cuda=$(realpath /usr/local/cuda)
  clean_root_binds+=("ro:$cuda")
  ln -sfn "$cuda" "$clean_root/usr/local/cuda"
fi
cat >"$clean_root/tmp/build-env.sh" <<ENV
export HVDRUN_BUNDLE_COMMIT='$commit' JOBS='${JOBS:-$(nproc)}' HVDRUN_BUNDLE_CMAKE_ARGS='${HVDRUN_BUNDLE_CMAKE_ARGS:-}'
export CCACHE_DIR='$ccache_dir' CCACHE_MAXSIZE=2G
out='$out'
ENV
in_root 3600 <<'SCRIPT'
. /tmp/build-env.sh
bash /src/hvdrun/packaging/bundle/build-bundle.sh "$out"
ccache --show-stats | grep -E '^(cache hit|cache miss|Hits|Misses)' || true
SCRIPT
step "built: $(find "$out" -maxdepth 1 -name 'hvdrun-*-linux-*.tar.gz')"
