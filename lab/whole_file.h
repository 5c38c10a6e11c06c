// Whole files: read in one piece, and written so that a reader sees the old file or the new one,
// never a part (a temporary file in the same directory, synced, then renamed over the name).
// Errors read "cannot write 'PATH': REASON".
#ifndef HVDRUN_LAB_WHOLE_FILE_H_
#define HVDRUN_LAB_WHOLE_FILE_H_

#include <string>

#include "common/status.h"

namespace hvdrun::lab {

Status WriteFileAtomically(const std::string& path, const std::string& contents);

StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_WHOLE_FILE_H_
