#!/usr/bin/env bash
# Installs the Debian (bookworm) packages that hvdrun's build, tests and benchmarks need, and
# says which ones it installs. Idempotent: a second run installs nothing. Needs root (or sudo).
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ ccache dpkg-dev libcli11-dev nlohmann-json3-dev libboost-dev libssl-dev libgloo-dev
  # remote hosts: hvdrun starts their agents over SSH
  libssh-dev
  # the MPI backend and hvdrun --mpi (Open MPI's mpirun is also the launch-latency baseline)
  libopenmpi-dev openmpi-bin
  # hvdrun-trainer: libtorch (CPU) and the Fashion-MNIST data set it trains on
  libtorch-dev zlib1g-dev dataset-fashion-mnist
  # an optimized BLAS for libtorch (else netlib's reference BLAS is used: with one thread per
  # process, ResNet-50's 1x1 convolutions go through BLAS and a step is 14 times slower)
  libopenblas0-openmp
  # hvdrun-lab: experiment files; headless Chromium renders report.html in its test
  libyaml-cpp-dev chromium
  # tests and lint; python3-torch runs examples/torch_distributed (the env:// contract test)
  libgtest-dev clang-tidy clang-format python3-torch
  # the fuzzers (tests/fuzz/, scripts/fuzz.sh, the test `fuzz`): clang and libFuzzer's runtime
  clang-14 libclang-rt-14-dev
  # hvdrun.torch, the Python API (python/): built against Python's headers and pybind11, imported
  # with Debian's torch; cloudpickle serializes broadcast_object's objects
  python3-dev pybind11-dev python3-cloudpickle
  # the multi-host test cluster: network namespaces, each with its own sshd; strace slows the
  # launcher's mkdir in the test of host keys recorded by hosts reached at once
  iproute2 openssh-server openssh-client strace
  # the Slurm test cluster (tests/cluster/slurm_cluster.h): slurmctld, one slurmd per server, munge
  slurmctld slurmd slurm-client munge
  # the Debian packages (packaging/) and their test: build, lint, a clean root to install them in
  debhelper dh-python help2man pkgconf lintian debootstrap piuparts
  # the relocatable bundle (packaging/bundle/): patchelf sets each file's $ORIGIN-relative RUNPATH
  patchelf
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "install-deps: missing packages (${missing[*]}); run as root or install sudo" >&2
    exit 1
  fi
  as_root=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
