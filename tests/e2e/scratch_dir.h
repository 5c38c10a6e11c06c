// A fresh directory under $TMPDIR (or /tmp) for one test, removed with everything in it when the
// ScratchDir goes out of scope.
#ifndef HVDRUN_TESTS_E2E_SCRATCH_DIR_H_
#define HVDRUN_TESTS_E2E_SCRATCH_DIR_H_

#include <string>

namespace hvdrun::e2e {

class ScratchDir {
 public:
  ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  // Empty when the directory could not be created.
  const std::string& path() const { return path_; }

  // Writes `contents` to path()/name and returns the file's path.
  std::string WriteFile(const std::string& name, const std::string& contents) const;

 private:
  std::string path_;
};

// The whole contents of the file at `path`; empty when it cannot be read.
std::string ReadFileBytes(const std::string& path);

}  // namespace hvdrun::e2e

#endif  // HVDRUN_TESTS_E2E_SCRATCH_DIR_H_
