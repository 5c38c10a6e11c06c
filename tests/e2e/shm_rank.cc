// hvdrun-test-shm-rank DIR: a rank program for the end-to-end tests of libhvdrun's shared-memory
// allreduce (runtime/shm/). It initialises from its environment, finds the host's segment among
// its own mappings (/proc/self/maps: "/dev/shm/hvdrun-<hex> (deleted)" once every rank has mapped
// it), writes "PID NAME" to DIR/rank-R (through a temporary file, so that a reader sees all of it),
// then allreduces 1 Mi floats until a collective fails, whose error it prints; it exits 1 then.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"

namespace {

// The name of the hvdrun segment this process maps, or "" when it maps none.
std::string MappedSegment() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const std::string prefix = "/dev/shm/hvdrun-";
  while (std::getline(maps, line)) {
    const size_t at = line.find(prefix);
    if (at == std::string::npos) continue;
    const size_t start = at + std::string("/dev/shm").size();
    const size_t end = line.find(' ', start);
    return line.substr(start, end == std::string::npos ? end : end - start);
  }
  return "";
}

int Run(const std::string& dir) {
  hvdrun::StatusOr<std::unique_ptr<hvdrun::Runtime>> runtime = hvdrun::Runtime::InitFromEnvironment();
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().message().c_str());
    return 1;
  }
  hvdrun::Runtime& rt = *runtime.value();
  const std::string path = dir + "/rank-" + std::to_string(rt.rank());
  {
    std::ofstream record(path + ".new");
    record << ::getpid() << " " << MappedSegment() << "\n";
  }
  std::filesystem::rename(path + ".new", path);
  std::vector<float> values(size_t{1} << 20, 1.0F);
  while (true) {
    hvdrun::Status status = rt.Allreduce(values.data(), values.data(), values.size(),
                                         hvdrun::DataType::kFloat32, hvdrun::ReduceOp::kMax);
    if (!status.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", rt.rank(), status.message().c_str());
      return 1;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hvdrun-test-shm-rank DIR\n");
    return 2;
  }
  return Run(argv[1]);
}
