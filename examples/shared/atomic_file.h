// WriteFileAtomically: how the bundled example programs write their --json files, so that a reader
// (hvdrun-lab, a script polling for the file) sees the whole new file or none, also after a crash.
//
// Like examples/shared/whole_number_flag.h, the examples' own: they build against libhvdrun's public
// headers only, and hvdrun's writer (common/atomic_file.h) is not part of them.
#ifndef HVDRUN_EXAMPLES_SHARED_ATOMIC_FILE_H_
#define HVDRUN_EXAMPLES_SHARED_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun::examples {

// Writes `contents` to a temporary file beside `path` (PATH.tmp.PID), syncs it, renames it over
// `path` and syncs the directory, so that the rename itself survives a crash. On failure the
// temporary file is gone, `path` is as it was (unless only the directory's sync failed), and the
// error reads "cannot write 'PATH': REASON". One writer per path at a time.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace hvdrun::examples

#endif  // HVDRUN_EXAMPLES_SHARED_ATOMIC_FILE_H_
