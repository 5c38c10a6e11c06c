// WriteFileAtomically and AtomicFileWriter: the one way hvdrun's programs write a file that another
// program reads (the launcher's results directory, the merged timeline, hvdrun-lab's runs and
// reports), so that a reader sees the old file or the new one, never a part, also after a crash.
//
// The contents go to a temporary file in the same directory (PATH.tmp.PID), which is synced,
// renamed over PATH, and then the directory is synced, so that the rename itself is on disk. One
// writer per path at a time: two threads of one process writing one path share the temporary name.
// Errors read "cannot write 'PATH': REASON"; a caller adds where the path came from ("--results: ").
#ifndef HVDRUN_COMMON_ATOMIC_FILE_H_
#define HVDRUN_COMMON_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "common/process/file_descriptor.h"
#include "hvdrun/status.h"

namespace hvdrun {

// On failure the temporary file is gone and PATH is as it was, unless only the directory's sync
// failed ("cannot write 'PATH': syncing its directory: REASON"): then PATH is new but may not
// survive a crash.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// The same, for contents too large to hold in memory at once: Open, Write the pieces in order,
// Commit. PATH changes only in Commit, with the same guarantees and errors as WriteFileAtomically.
// A writer destroyed without a successful Commit (or after any failed call) removes its temporary
// file and leaves PATH as it was. Not thread-safe.
class AtomicFileWriter {
 public:
  // Creates the temporary file; fails, naming PATH, when it cannot.
  static StatusOr<AtomicFileWriter> Open(const std::string& path);

  AtomicFileWriter(AtomicFileWriter&& other) noexcept = default;
  AtomicFileWriter& operator=(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  // Appends `data` (unbuffered: callers batch). After a failure, later calls fail too.
  Status Write(std::string_view data);
  // Syncs, renames over PATH and syncs the directory; at most once.
  Status Commit();

 private:
  explicit AtomicFileWriter(std::string path);
  // Removes the temporary file (if still there) and returns the error for `error` (an errno).
  Status Fail(int error);
  void Discard();

  std::string path_;
  std::string temporary_;
  UniqueFd fd_;
};

// Syncs directory `dir`, so that what was renamed into it or created in it survives a crash (for a
// whole directory put in place by rename, as hvdrun-lab's runs are). Errors read
// "cannot sync directory 'DIR': REASON".
Status SyncDirectory(const std::string& dir);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_ATOMIC_FILE_H_
