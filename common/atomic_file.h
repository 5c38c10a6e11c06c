// WriteFileAtomically: the one way hvdrun's programs write a file that another program reads (the
// launcher's results directory, hvdrun-lab's runs and reports), so that a reader sees the old file
// or the new one, never a part, also after a crash.
//
// The contents go to a temporary file in the same directory (PATH.tmp.PID), which is synced,
// renamed over PATH, and then the directory is synced, so that the rename itself is on disk. One
// writer per path at a time: two threads of one process writing one path share the temporary name.
// Errors read "cannot write 'PATH': REASON"; a caller adds where the path came from ("--results: ").
#ifndef HVDRUN_COMMON_ATOMIC_FILE_H_
#define HVDRUN_COMMON_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun {

// On failure the temporary file is gone and PATH is as it was, unless only the directory's sync
// failed ("cannot write 'PATH': syncing its directory: REASON"): then PATH is new but may not
// survive a crash.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Syncs directory `dir`, so that what was renamed into it or created in it survives a crash (for a
// whole directory put in place by rename, as hvdrun-lab's runs are). Errors read
// "cannot sync directory 'DIR': REASON".
Status SyncDirectory(const std::string& dir);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_ATOMIC_FILE_H_
