#!/usr/bin/env bash
# The Debian packages' test (CTest label "package"; root only, exit 77 = skipped):
#
#   bash packaging/test-debs.sh [WORK_DIR]          (default build/package-test)
#
# 1. builds every package from a clean copy of the tree (packaging/build-debs.sh;
#    HVDRUN_PACKAGE_PROFILES=pkg.hvdrun.notrainer,pkg.hvdrun.nopython leaves out the two on torch),
# 2. lintian: no error and no warning (packaging/debian/*.lintian-overrides say why for each override),
# 3. makes a clean root of this machine's Debian release (debootstrap minbase, and eatmydata, which
#    piuparts's own roots have too: under it dpkg skips fsync, and installing and removing libtorch's
#    dependencies is several times faster; with the packages built, the test took 8 minutes without
#    it, 3 1/4 with it) from the archive this machine's apt uses, or from the day's tarball of one,
# 4. runs piuparts on the packages (install, remove, purge in a copy of that root),
# 5. installs the packages in the root with apt, so that a missing dependency shows; runs hvdrun
#    -np 2 over Gloo and MPI with hvdrun-bench, an hvdrun-lab experiment and its report, and the
#    allreduce example built with find_package(hvdrun) and with pkg-config, each under hvdrun; then
#    purges the packages and checks that nothing of them is left. Where they were built, also
#    hvdrun-trainer under hvdrun, and hvdrun.torch under hvdrun, imported both as hvdrun.torch and,
#    through the compatibility directory, as horovod.torch.
#
# HVDRUN_PACKAGE_DEBS=DIR tests the packages already built in DIR (by build-debs.sh) instead.
#
# The clean root, the namespaces everything in it runs in, and their cleanup by PID, also when the
# test fails or is interrupted: packaging/lib/clean-root.sh, shared with the bundle's test.
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(realpath -m "${1:-$root_dir/build/package-test}")

# shellcheck source=packaging/lib/clean-root.sh
. "$root_dir/packaging/lib/clean-root.sh"
clean_root_skip_unless_root test-debs "debootstrap, chroot, piuparts"
clean_root_require test-debs dpkg-buildpackage lintian piuparts
clean_root_init test-debs "$work" "$work/piuparts"

# --- 1. build -------------------------------------------------------------------------------------
debs_dir=${HVDRUN_PACKAGE_DEBS:-$work/debs}
if [ -z "${HVDRUN_PACKAGE_DEBS:-}" ]; then
  profiles=${HVDRUN_PACKAGE_PROFILES:-}
  step "building the packages (profiles: ${profiles:-none})"
  DEB_BUILD_PROFILES=$profiles bash "$root_dir/packaging/build-debs.sh" "$debs_dir"
fi
debs=("$debs_dir"/*.deb)
test_debs=()
for deb in "${debs[@]}"; do
  case $(basename "$deb") in
    *-dbgsym_*) ;;
    *) test_debs+=("$deb") ;;
  esac
done
package_names=()
for deb in "${test_debs[@]}"; do package_names+=("$(dpkg-deb -f "$deb" Package)"); done

# --- 2. lintian -----------------------------------------------------------------------------------
step "lintian"
lintian --fail-on error,warning --display-info "$debs_dir"/*.changes

# --- 3. a clean root ------------------------------------------------------------------------------
step "a clean root: debootstrap --variant=minbase $codename, or the day's tarball of one"
clean_root_make

# --- 4. piuparts, on a copy of the clean root, before the test below changes it -------------------
step "piuparts"
mkdir -p "$work/piuparts"
in_namespaces 600 piuparts --no-adequate --tmpdir="$work/piuparts" --existing-chroot="$work/root" \
  --distribution="$codename" --mirror="$mirror main" "${extra_repos[@]}" "${test_debs[@]}" \
  >"$work/piuparts.log" 2>&1 || {
  tail -n 40 "$work/piuparts.log" >&2
  exit 1
}
grep -h 'PASS: All tests' "$work/piuparts.log"

clean_root_configure
mkdir -p "$work/root/tmp/debs" "$work/root/root/allreduce"
cp "${test_debs[@]}" "$work/root/tmp/debs/"
printf '%s\n' "${package_names[@]}" >"$work/root/tmp/debs/packages"
cp "$root_dir/examples/allreduce/allreduce.cc" "$root_dir/examples/allreduce/CMakeLists.txt" "$work/root/root/allreduce/"
cp "$root_dir/packaging/lib/hvdrun_torch_check.py" "$root_dir/packaging/lib/installed-checks.sh" "$work/root/tmp/"

step "apt install of ${package_names[*]} (and cmake, g++, pkgconf for the example) in the clean root"
in_root 600 <<'SCRIPT'
apt-get update -q >/dev/null
eatmydata apt-get install -y -q /tmp/debs/*.deb cmake g++ pkgconf >/tmp/apt-install.log 2>&1 ||
  { tail -n 30 /tmp/apt-install.log; exit 1; }
SCRIPT

step "hvdrun, hvdrun-lab and the example programs in the clean root"
in_root 600 <<'SCRIPT'
cd /root
installed_checks_name=test-debs
. /tmp/installed-checks.sh
for program in hvdrun hvdrun-agent hvdrun-bench hvdrun-lab; do
  "$program" --version
  test -s "/usr/share/man/man1/$program.1.gz"
done

check_gloo_bench
hvdrun -np 2 --mpi hvdrun-bench -b 1K -e 64K -f 8 --iters 5 --warmup 1 --json mpi.json | tee mpi.out
grep -q '"busbw_gbps"' mpi.json
check_lab_experiment package-smoke

sums='sum over ranks of (rank + 1) * (1 2 3 4) = 3 6 9 12'
cmake -S allreduce -B allreduce/build -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >cmake.out ||
  { cat cmake.out; exit 1; }
cmake --build allreduce/build >>cmake.out || { cat cmake.out; exit 1; }
hvdrun -np 2 --gloo allreduce/build/allreduce >cmake-run.out
expect cmake-run.out "[1]<stdout>:rank 1 of 2: $sums"

# shellcheck disable=SC2046  # pkg-config's flags are words
c++ -std=c++17 -Wall -Wextra -Werror allreduce/allreduce.cc $(pkg-config --cflags --libs hvdrun) -o allreduce-pc
hvdrun -np 2 --mpi ./allreduce-pc >pc-run.out
expect pc-run.out "[0]<stdout>:rank 0 of 2: $sums"
SCRIPT

if grep -qx -e hvdrun-trainer -e python3-hvdrun "$work/root/tmp/debs/packages"; then
  step "hvdrun-trainer and hvdrun.torch in the clean root"
  in_root 600 <<'SCRIPT'
cd /root
installed_checks_name=test-debs
. /tmp/installed-checks.sh
if grep -qx hvdrun-trainer /tmp/debs/packages; then
  hvdrun-trainer --version
  test -s /usr/share/man/man1/hvdrun-trainer.1.gz
  hvdrun -np 2 --gloo hvdrun-trainer --model fmnist-cnn --synthetic --batch-size 8 --warmup-steps 1 \
    --steps 2 --json trainer.json | tee trainer.out
  grep -q '"backend": "gloo"' trainer.json
  grep -q '"ranks": 2' trainer.json
fi
if grep -qx python3-hvdrun /tmp/debs/packages; then
  hvdrun -np 2 --gloo /usr/bin/python3 /tmp/hvdrun_torch_check.py hvdrun | tee torch.out
  expect torch.out "[1]<stdout>:hvdrun rank 1 of 2: sum [3.0, 3.0, 3.0, 3.0], same weights True"
  PYTHONPATH=/usr/share/hvdrun/horovod-compat hvdrun -np 2 --mpi /usr/bin/python3 /tmp/hvdrun_torch_check.py horovod | tee horovod.out
  expect horovod.out "[0]<stdout>:horovod rank 0 of 2: sum [3.0, 3.0, 3.0, 3.0], same weights True"
fi
SCRIPT
fi

step "apt purge, and nothing of the packages left"
in_root 300 <<'SCRIPT'
mapfile -t packages </tmp/debs/packages
dpkg-query -L "${packages[@]}" | sort -u >/tmp/package-paths
apt-get purge -y -q "${packages[@]}" >/tmp/purge.log 2>&1 || { cat /tmp/purge.log; exit 1; }
apt-get autoremove --purge -y -q >>/tmp/purge.log 2>&1 || { cat /tmp/purge.log; exit 1; }
left=0
while IFS= read -r path; do
  [ -n "$path" ] && [ "$path" != /. ] || continue
  if [ -L "$path" ] || [ -f "$path" ]; then
    echo "test-debs: left after purge: $path"
    left=1
  elif [ -d "$path" ] && ! dpkg-query -S "$path" >/dev/null 2>&1; then
    echo "test-debs: directory left after purge, owned by no package: $path"
    left=1
  fi
done </tmp/package-paths
if dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null | grep -v 'not-installed$'; then
  echo "test-debs: still known to dpkg after purge"
  left=1
fi
exit "$left"
SCRIPT

step "passed"
