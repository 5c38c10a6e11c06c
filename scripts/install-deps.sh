#!/usr/bin/env bash
# Installs the Debian (bookworm) packages that hvdrun needs, by purpose, and says which ones it
# installs. Idempotent: a second run installs nothing. Needs root (or sudo).
#   bash scripts/install-deps.sh            every set below (what `quickstart.sh test` and CI need)
#   bash scripts/install-deps.sh SET...     those sets only: demo, test, packaging, cluster, lint
# `quickstart.sh demo` installs the demo set only. Each set is its own array, one purpose each.
set -euo pipefail

# demo: build and run the README's demo (configs/demo.yaml): hvdrun, hvdrun-agent, hvdrun-lab and
# hvdrun-trainer with libhvdrun and its Gloo and MPI backends, and nothing else.
demo_packages=(
  # the build: compiler, build tools, cache; dpkg-buildflags (scripts/build-settings.sh)
  cmake ninja-build g++ ccache dpkg-dev
  # what the programs link: flags, JSON, Boost.Asio, TLS digests, Gloo, libssh (hvdrun reaches
  # remote hosts' agents over SSH), yaml-cpp (hvdrun-lab's experiment files)
  libcli11-dev nlohmann-json3-dev libboost-dev libssl-dev libgloo-dev libssh-dev libyaml-cpp-dev
  # the MPI backend and hvdrun --mpi (Open MPI's mpirun is also the launch-latency baseline)
  libopenmpi-dev openmpi-bin
  # hvdrun-trainer: libtorch (CPU) and zlib (its data sets' files)
  libtorch-dev zlib1g-dev
  # an optimized BLAS for libtorch (else netlib's reference BLAS is used: with one thread per
  # process, ResNet-50's 1x1 convolutions go through BLAS and a step is 14 times slower)
  libopenblas0-openmp
)

# test: the unit, end-to-end and Python tests, and what the test build builds beyond the demo.
test_packages=(
  libgtest-dev
  # the fuzzers (tests/fuzz/, scripts/fuzz.sh, the test `fuzz`): clang and libFuzzer's runtime
  clang-14 libclang-rt-14-dev
  # hvdrun.torch, the Python API (python/): built against Python's headers and pybind11, imported
  # with Debian's torch; cloudpickle serializes broadcast_object's objects; python3-torch also
  # runs examples/torch_distributed (the env:// contract test)
  python3-dev pybind11-dev python3-cloudpickle python3-torch
  # the Fashion-MNIST data set that hvdrun-trainer's and hvdrun.torch's training tests learn
  dataset-fashion-mnist
  # headless Chromium renders hvdrun-lab's report.html in its test
  chromium
)

# packaging: the Debian packages (packaging/) and their test (build, lint, a clean root to install
# them in), and the relocatable bundle (patchelf sets each file's $ORIGIN-relative RUNPATH).
packaging_packages=(
  debhelper dh-python help2man pkgconf lintian debootstrap piuparts
  patchelf
)

# cluster: the multi-host test cluster (network namespaces, each with its own sshd; strace slows
# the launcher's mkdir in the test of host keys recorded by hosts reached at once) and the Slurm
# test cluster (tests/cluster/slurm_cluster.h: slurmctld, one slurmd per server, munge).
cluster_packages=(
  iproute2 openssh-server openssh-client strace
  slurmctld slurmd slurm-client munge
)

# lint: the CTest tests clang_tidy and clang_format (.clang-tidy, .clang-format).
lint_packages=(
  clang-tidy clang-format
)

sets=("$@")
if [ ${#sets[@]} -eq 0 ]; then
  sets=(demo test packaging cluster lint)
fi
packages=()
for set in "${sets[@]}"; do
  case "$set" in
    demo) packages+=("${demo_packages[@]}") ;;
    test) packages+=("${test_packages[@]}") ;;
    packaging) packages+=("${packaging_packages[@]}") ;;
    cluster) packages+=("${cluster_packages[@]}") ;;
    lint) packages+=("${lint_packages[@]}") ;;
    *)
      echo "install-deps: no set '$set' (demo, test, packaging, cluster, lint)" >&2
      exit 2
      ;;
  esac
done

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages of ${sets[*]} already installed"
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
