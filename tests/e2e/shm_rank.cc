// hvdrun-test-shm-rank DIR: a rank program for the end-to-end tests of libhvdrun's shared-memory
// allreduce (runtime/shm/). It initialises from its environment, finds the host's segment among
// its own mappings (/proc/self/maps: "/memfd:hvdrun-shm (deleted)", a memfd that local rank 0
// handed over), writes "PID SEGMENT" to DIR/rank-R (SEGMENT: "memfd:hvdrun-shm:INODE"; through a
// temporary file, so that a reader sees all of it), then allreduces 1 Mi floats until a collective
// fails, whose error it prints; it exits 1 then.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "hvdrun/runtime.h"

namespace {

// "memfd:hvdrun-shm:INODE" for the hvdrun segment this process maps, or "-" when it maps none.
std::string MappedSegment() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(" /memfd:hvdrun-shm ") == std::string::npos) continue;
    // address perms offset device inode path
    std::istringstream fields(line);
    std::string address, perms, offset, device, inode;
    fields >> address >> perms >> offset >> device >> inode;
    return "memfd:hvdrun-shm:" + inode;
  }
  return "-";
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
