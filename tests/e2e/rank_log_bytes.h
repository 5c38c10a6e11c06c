// The bytes `hvdrun-test-rank log-bytes` writes, shared with the test that compares hvdrun's
// per-rank log files against them.
#ifndef HVDRUN_TESTS_E2E_RANK_LOG_BYTES_H_
#define HVDRUN_TESTS_E2E_RANK_LOG_BYTES_H_

#include <cstddef>
#include <string>

namespace hvdrun::e2e {

// Size of the long line in RankLogBytes: far above the 64 KiB pieces that console lines are cut to.
inline constexpr size_t kLongLineBytes = 1 << 20;

// Every byte value (NUL, '\r' and a '\n' among them), a 1 MiB line that differs by rank and
// stream, and a last line without a newline.
inline std::string RankLogBytes(int rank, bool is_stdout) {
  std::string bytes;
  for (int value = 0; value < 256; ++value) bytes.push_back(static_cast<char>(value));
  bytes.push_back('\n');
  const size_t offset = static_cast<size_t>(rank) * 2 + (is_stdout ? 0 : 1);
  for (size_t i = 0; i < kLongLineBytes; ++i) bytes.push_back(static_cast<char>('!' + (i * 7 + offset) % 90));
  bytes.push_back('\n');
  bytes += "rank " + std::to_string(rank) + (is_stdout ? " stdout" : " stderr") + ": last line, no newline";
  return bytes;
}

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_RANK_LOG_BYTES_H_
