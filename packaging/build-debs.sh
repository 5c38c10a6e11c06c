#!/usr/bin/env bash
# Builds hvdrun's Debian packages from a clean copy of this tree (Debian bookworm, with the build
# dependencies installed: scripts/install-deps.sh installs them):
#
#   bash packaging/build-debs.sh [OUT_DIR]
#
# OUT_DIR (default build/debs) gets the .deb files, the .buildinfo and the .changes. The copy
# holds the files git tracks or would track (nothing it ignores: no build directory), as they are in
# the working tree, with packaging/debian/ as its debian/ and a debian/changelog entry for the
# project's one version (project(VERSION) in CMakeLists.txt). The build runs dpkg-buildpackage on it,
# unsigned, binary packages only. Options from the environment, as dpkg-buildpackage takes them:
#   DEB_BUILD_PROFILES=pkg.hvdrun.notrainer   leave out hvdrun-trainer (and libtorch: minutes less)
#   CMAKE_CXX_COMPILER_LAUNCHER=ccache        compile through ccache (under scripts/quickstart.sh
#                                             test, with settings that find the test build's objects)
#   JOBS=N                                    parallel jobs (default: every CPU)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/build/debs}")

# shellcheck source=packaging/lib/source-copy.sh
. "$root/packaging/lib/source-copy.sh"
version=$(project_version "$root")

# The copy is always in the same place, so that the paths in compiler flags, and with them a
# compiler cache's keys, stay the same from one build to the next.
work=$out/source
tree=$work/hvdrun-$version
rm -rf "$work"
copy_source_tree "$root" "$tree"
cp -a "$root/packaging/debian" "$tree/debian"

# The changelog's one entry: this version, dated by the last commit (so that the same commit builds
# the same packages: dpkg takes SOURCE_DATE_EPOCH from it).
maintainer=$(sed -n 's/^Maintainer: //p' "$tree/debian/control")
date=$(date -R -u -d "@$(git -C "$root" log -1 --format=%ct)")
commit=$(git -C "$root" describe --always --dirty)
cat >"$tree/debian/changelog" <<CHANGELOG
hvdrun ($version) unstable; urgency=medium

  * hvdrun $version (commit $commit).

 -- $maintainer  $date
CHANGELOG

jobs=${JOBS:-$(nproc)}
echo "build-debs: hvdrun $version (commit $commit), profiles: ${DEB_BUILD_PROFILES:-none}, $jobs jobs, in $tree"
(cd "$tree" && dpkg-buildpackage -us -uc -b -j"$jobs")

mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
echo "build-debs: packages in $out:"
(cd "$out" && ls -1 ./*.deb)
