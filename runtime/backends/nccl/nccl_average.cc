#include "runtime/backends/nccl/nccl_average.h"

#include <cstdio>

namespace hvdrun {
namespace {

struct Version {
  int major;
  int minor;
  int patch;
};

// NCCL changed the encoding of NCCL_VERSION_CODE at 2.9: the minor number got two digits.
Version Decode(int code) {
  if (code >= 10000) return {code / 10000, code / 100 % 100, code % 100};
  return {code / 1000, code / 100 % 10, code % 100};
}

}  // namespace

NcclAverage ChooseNcclAverage(int version_code, int size) {
  if (size <= 1) return NcclAverage::kNoCall;
  const Version version = Decode(version_code);
  const bool has_avg = version.major > 2 || (version.major == 2 && version.minor >= 10);
  return has_avg ? NcclAverage::kAvg : NcclAverage::kSumThenDivide;
}

const char* NcclVersionText(int version_code, char (&text)[16]) {
  const Version version = Decode(version_code);
  std::snprintf(text, sizeof(text), "%d.%d.%d", version.major, version.minor, version.patch);
  return text;
}

}  // namespace hvdrun
