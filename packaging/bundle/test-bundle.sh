#!/usr/bin/env bash
# The relocatable bundle's test (CTest label "package"; root only, exit 77 = skipped):
#
#   bash packaging/bundle/test-bundle.sh [WORK_DIR]          (default build/bundle-test)
#
# 1. builds the bundle in a Debian bullseye root (packaging/bundle/build-bundle-bullseye.sh, which
#    runs build-bundle.sh there: it checks that every library a file needs is in it or the base
#    system, and its size); HVDRUN_BUNDLE_TARBALL=FILE tests that one; every ELF file in it needs no
#    newer glibc, libstdc++ or libgcc_s than the stated baseline (packaging/bundle/symbol-versions.sh
#    prints the table, file by file),
# then in a clean root of each release of HVDRUN_BUNDLE_TEST_RELEASES (default: this machine's
# Debian release, then bullseye, the baseline's: glibc 2.31, GCC 10's libstdc++):
# 2. makes the clean root (packaging/lib/clean-root.sh, shared with the package test: debootstrap
#    minbase, or the day's tarball of one): no compiler, no Python, none of hvdrun's build
#    dependencies,
# 3. unpacks the bundle there and moves it elsewhere (nothing in it may name its place); there,
#    every library each of its ELF files needs resolves but the machine's own (Open MPI's, NCCL);
#    hvdrun -np 2 --gloo hvdrun-bench runs; hvdrun --check names the bundle's Gloo; hvdrun-lab
#    validates, runs and reports a small experiment; hvdrun-setup says that the compiler is missing,
# 4. (this machine's release only: bullseye's torch, 1.7, is older than hvdrun.torch needs)
#    installs what a user's machine would have, a step at a time, hvdrun-setup saying each time
#    what is still missing: g++ (then: no python3), Debian's python3-torch and libtorch-dev (then: no
#    pybind11), pybind11-dev (then --cuda: this torch has no CUDA); then hvdrun-setup builds
#    hvdrun-trainer and hvdrun.torch against that torch (timed), and says there is no NCCL where
#    the bundle has the NCCL backend; runs hvdrun -np 2 --gloo hvdrun-trainer, the hvdrun.torch
#    check (packaging/lib/hvdrun_torch_check.py) as hvdrun.torch and as horovod.torch, and
#    gpu-check.sh's autotune rows (bench/autotune_replay.sh, its analysis) at one rank over Gloo,
# 5. the bundle's allreduce example built with that release's g++ and CMake (find_package(hvdrun))
#    and with pkg-config, each run under hvdrun -np 2 --gloo,
# 6. where the bundle has the MPI backend: installs the release's openmpi-bin, the machine's own
#    Open MPI, and runs hvdrun -np 2 --mpi hvdrun-bench; where it has NCCL: hvdrun --nccl fails,
#    naming libnccl.so.2.
# Each step says how long the test has run.
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
work=$(realpath -m "${1:-$root_dir/build/bundle-test}")

# shellcheck source=packaging/lib/clean-root.sh
. "$root_dir/packaging/lib/clean-root.sh"
clean_root_skip_unless_root test-bundle "debootstrap, chroot"
clean_root_init test-bundle "$work"
host_codename=$codename
releases=${HVDRUN_BUNDLE_TEST_RELEASES:-$host_codename bullseye}

# --- 1. the bundle ----------------------------------------------------------------------------------
tarball=${HVDRUN_BUNDLE_TARBALL:-}
if [ -z "$tarball" ]; then
  step "building the bundle in a Debian bullseye root"
  bash "$root_dir/packaging/bundle/build-bundle-bullseye.sh" "$work/bundle"
  tarball=$(find "$work/bundle" -maxdepth 1 -name 'hvdrun-*-linux-*.tar.gz' | head -n1)
fi
name=$(basename "$tarball" .tar.gz)
step "glibc and GCC runtime versions each file needs, against the baseline (packaging/bundle/baseline.env)"
bash "$root_dir/packaging/bundle/symbol-versions.sh" "$tarball"

# --- 2. a clean root --------------------------------------------------------------------------------
clean_root_for() { # clean_root_for RELEASE: a clean root of RELEASE with the bundle and test-env.sh
  clean_root_codename=$1
  clean_root_find_sources
  step "a clean root: debootstrap --variant=minbase $codename, or the day's tarball of one"
  clean_root_make
  clean_root_configure
  cp "$tarball" "$clean_root/tmp/"
  cp "$root_dir/packaging/lib/hvdrun_torch_check.py" "$root_dir/packaging/lib/installed-checks.sh" "$clean_root/tmp/"
  cat >"$clean_root/tmp/test-env.sh" <<ENV
name=$name
ENV
  # What every script below starts with: the bundle's bin/ on PATH, and the checks it shares with
  # the package test (packaging/lib/installed-checks.sh: expect, check_gloo_bench, ...).
  cat >>"$clean_root/tmp/test-env.sh" <<'ENV'
bundle=/srv/$name
export PATH=$bundle/bin:$PATH
cd /root
installed_checks_name=test-bundle
. /tmp/installed-checks.sh
# setup_fails STATUS TEXT [ARGS]: hvdrun-setup ARGS exits STATUS, with TEXT in its last line
setup_fails() {
  local status=0
  hvdrun-setup "${@:3}" >setup.out 2>&1 || status=$?
  tail -n1 setup.out
  if [ "$status" -ne "$1" ] || ! tail -n1 setup.out | grep -qF -- "$2"; then
    echo "test-bundle: expected hvdrun-setup ${*:3} to exit $1 saying '$2'; it exited $status:"
    cat setup.out
    exit 1
  fi
}
ENV
}

# --- 3. unpacked, moved, run with nothing installed -------------------------------------------------
test_bare() {
  step "$codename: unpacked and moved in the clean root; its libraries; hvdrun -np 2 --gloo hvdrun-bench; hvdrun-lab"
  in_root 300 <<'SCRIPT'
. /tmp/test-env.sh
mkdir -p /opt/unpacked
tar -C /opt/unpacked -xzf "/tmp/$name.tar.gz"
mv "/opt/unpacked/$name" "$bundle"
rmdir /opt/unpacked
# Every library an ELF file needs is found, but the machine's own (not installed here).
find "$bundle" -type f | while IFS= read -r file; do
  if [ "$(head -c 4 "$file" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; then
    ldd "$file" | awk -v file="${file#"$bundle"/}" '/not found/ { print file ": " $1 }'
  fi
done | grep -vE ': (libnccl|libmpi|libmpi_[a-z]+|libopen-rte|libopen-pal|libcuda)\.so' >missing || true
if [ -s missing ]; then
  echo "test-bundle: libraries not found in the clean root:"
  cat missing
  exit 1
fi
for program in hvdrun hvdrun-agent hvdrun-bench hvdrun-lab; do "$program" --version; done
check_gloo_bench
# No Gloo package here: hvdrun --check names the bundle's own.
hvdrun --check | tee check.out
grep -Eq "^  gloo +Gloo [^ ]+ \(the bundle's own\)$" check.out
check_lab_experiment bundle-smoke
setup_fails 3 "no C++ compiler"
SCRIPT
}

# --- 4. what a user's machine has, a step at a time; hvdrun-setup -------------------------------------
test_setup() {
  step "$codename: apt install g++; hvdrun-setup: no python3"
  in_root 600 <<'SCRIPT'
. /tmp/test-env.sh
apt-get update -q >/dev/null
eatmydata apt-get install -y -q --no-install-recommends g++ >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; exit 1; }
setup_fails 3 "no python3"
SCRIPT

  step "$codename: apt install python3-torch libtorch-dev (and cmake, pkgconf for the example); hvdrun-setup: no pybind11"
  in_root 900 <<'SCRIPT'
. /tmp/test-env.sh
eatmydata apt-get install -y -q --no-install-recommends python3-torch libtorch-dev cmake make pkgconf \
  >/tmp/apt.log 2>&1 || { tail -n 30 /tmp/apt.log; exit 1; }
setup_fails 3 "pybind11 not found"
SCRIPT

  step "$codename: apt install pybind11-dev; hvdrun-setup --cuda: no CUDA; hvdrun-setup"
  in_root 900 <<'SCRIPT'
. /tmp/test-env.sh
eatmydata apt-get install -y -q --no-install-recommends pybind11-dev >/tmp/apt.log 2>&1 ||
  { tail -n 30 /tmp/apt.log; exit 1; }
setup_fails 3 "is built without CUDA" --cuda
before=$(date +%s)
hvdrun-setup | tee setup.out
echo "test-bundle: hvdrun-setup took $(($(date +%s) - before)) s"
. "$bundle/share/hvdrun/bundle.env"
if [[ " $HVDRUN_BUNDLE_MACHINE_LIBS " == *" libnccl.so.2 "* ]]; then
  grep -q '^hvdrun-setup: NCCL: none found' setup.out
  test ! -e "$bundle/lib/libnccl.so.2"
fi
SCRIPT

  step "$codename: hvdrun-trainer, hvdrun.torch and horovod.torch"
  in_root 600 <<'SCRIPT'
. /tmp/test-env.sh
hvdrun-trainer --version
hvdrun -np 2 --gloo hvdrun-trainer --model fmnist-cnn --synthetic --batch-size 8 --warmup-steps 1 \
  --steps 2 --json trainer.json | tee trainer.out
grep -q '"backend": "gloo"' trainer.json
grep -q '"ranks": 2' trainer.json

PYTHONPATH=$bundle/lib/python hvdrun -np 2 --gloo /usr/bin/python3 /tmp/hvdrun_torch_check.py hvdrun | tee torch.out
expect torch.out "[1]<stdout>:hvdrun rank 1 of 2: sum [3.0, 3.0, 3.0, 3.0], same weights True"
PYTHONPATH=$bundle/lib/python:$bundle/share/hvdrun/horovod-compat \
  hvdrun -np 2 --gloo /usr/bin/python3 /tmp/hvdrun_torch_check.py horovod | tee horovod.out
expect horovod.out "[0]<stdout>:horovod rank 0 of 2: sum [3.0, 3.0, 3.0, 3.0], same weights True"

# gpu-check.sh's autotune rows with what the bundle carries (over Gloo here: no GPU).
scripts=$bundle/share/hvdrun/scripts
bash "$scripts/bench/autotune_replay.sh" --backend gloo --ranks 1 --rounds 1 --sweeps 1 --thresholds 0,128 \
  --cycles 1 --tuned-iters 320 --stage "$bundle" --keep autotune >autotune.out
/usr/bin/python3 "$scripts/bench/autotune_analysis.py" rows autotune "replay" | tee autotune-rows.out
grep -q '^{"step": "replay: --autotune against the best fixed setting", "result": "[0-9.]*x best"' autotune-rows.out
SCRIPT
}

# --- 5. programs built against the bundle with the release's compiler -------------------------------
test_examples() {
  step "$codename: the allreduce example built with $codename's g++ (CMake find_package, pkg-config)"
  in_root 600 <<'SCRIPT'
. /tmp/test-env.sh
if ! command -v cmake >/dev/null; then
  apt-get update -q >/dev/null
  eatmydata apt-get install -y -q --no-install-recommends g++ cmake make pkgconf >/tmp/apt.log 2>&1 ||
    { tail -n 30 /tmp/apt.log; exit 1; }
fi
g++ --version | head -n1
sums='sum over ranks of (rank + 1) * (1 2 3 4) = 3 6 9 12'
example=$bundle/share/doc/hvdrun/examples/allreduce
cmake -S "$example" -B allreduce-build -DCMAKE_PREFIX_PATH="$bundle" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" \
  >cmake.out || { cat cmake.out; exit 1; }
cmake --build allreduce-build >>cmake.out || { cat cmake.out; exit 1; }
hvdrun -np 2 --gloo allreduce-build/allreduce >cmake-run.out
expect cmake-run.out "[1]<stdout>:rank 1 of 2: $sums"
# shellcheck disable=SC2046  # pkg-config's flags are words
c++ -std=c++17 -Wall -Wextra -Werror "$example/allreduce.cc" \
  $(PKG_CONFIG_PATH=$bundle/lib/pkgconfig pkg-config --cflags --libs hvdrun) -o allreduce-pc
hvdrun -np 2 --gloo ./allreduce-pc >pc-run.out
expect pc-run.out "[0]<stdout>:rank 0 of 2: $sums"
SCRIPT
}

# --- 6. the machine's own Open MPI; no NCCL --------------------------------------------------------------
test_mpi_nccl() {
  local backends
  # shellcheck source=/dev/null
  backends=$(. "$clean_root/srv/$name/share/hvdrun/bundle.env" && echo "$HVDRUN_BUNDLE_BACKENDS")
  if [[ " $backends " == *" mpi "* ]]; then
    step "$codename: apt install openmpi-bin (the machine's own); hvdrun -np 2 --mpi hvdrun-bench"
    in_root 600 <<'SCRIPT'
. /tmp/test-env.sh
eatmydata apt-get install -y -q --no-install-recommends openmpi-bin >/tmp/apt.log 2>&1 ||
  { tail -n 30 /tmp/apt.log; exit 1; }
mpirun --version | head -n1
hvdrun -np 2 --mpi hvdrun-bench -b 1K -e 64K -f 8 --iters 5 --warmup 1 --json mpi.json | tee mpi.out
grep -q '"busbw_gbps"' mpi.json
SCRIPT
  fi
  if [[ " $backends " == *" nccl "* ]]; then
    step "$codename: hvdrun --nccl without NCCL: fails, naming libnccl.so.2"
    in_root 120 <<'SCRIPT'
. /tmp/test-env.sh
status=0
hvdrun -np 1 --nccl hvdrun-bench -b 8 -e 8 --iters 1 --warmup 0 >nccl.out 2>&1 || status=$?
cat nccl.out
if [ "$status" -eq 0 ] || ! grep -q 'libnccl\.so\.2' nccl.out; then
  echo "test-bundle: expected hvdrun --nccl to fail naming libnccl.so.2 (exit $status)"
  exit 1
fi
SCRIPT
  fi
}

for release in $releases; do
  clean_root_for "$release"
  test_bare
  if [ "$release" = "$host_codename" ]; then
    test_setup
  fi
  test_examples
  test_mpi_nccl
done
step "passed"
