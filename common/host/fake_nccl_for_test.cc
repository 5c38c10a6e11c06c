// A stand-in for libnccl.so.2 in host_facts_test: ncclGetVersion alone, answering the version code in
// HVDRUN_FAKE_NCCL_VERSION_CODE (default 22809, NCCL 2.28.9).
#include <cstdlib>

// NOLINTNEXTLINE(readability-identifier-naming): NCCL's name, which the probe looks up
extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  const char* code = std::getenv("HVDRUN_FAKE_NCCL_VERSION_CODE");
  *version = code != nullptr ? static_cast<int>(std::strtol(code, nullptr, 10)) : 22809;
  return 0;
}
