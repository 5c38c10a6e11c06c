// ReadWholeFile: a file read in one piece, for hvdrun-lab's experiment files, run records and logs.
// Errors read "cannot read 'PATH': REASON". Files are written with WriteFileAtomically
// (common/atomic_file.h), so a reader sees a whole file or none.
#ifndef HVDRUN_LAB_WHOLE_FILE_H_
#define HVDRUN_LAB_WHOLE_FILE_H_

#include <string>

#include "hvdrun/status.h"

namespace hvdrun::lab {

StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_WHOLE_FILE_H_
