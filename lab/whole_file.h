// ReadWholeFile: a file read in one piece, for hvdrun-lab's experiment files, run records and logs.
// Files are written with WriteFileAtomically (common/atomic_file.h), so a reader sees a whole file
// or none. Every read is bounded: a file larger than `max_bytes` is refused, before it is read, so
// that a damaged or hostile file cannot take the machine's memory.
#ifndef HVDRUN_LAB_WHOLE_FILE_H_
#define HVDRUN_LAB_WHOLE_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun::lab {

// The file at `path`, at most `max_bytes` long. Errors read "cannot read WHAT 'PATH': REASON"
// ("cannot read 'PATH': ..." when `what` is empty); a file too large gives the reason "it is larger
// than N bytes, the most hvdrun-lab reads of it".
StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes, std::string_view what = "");

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_WHOLE_FILE_H_
