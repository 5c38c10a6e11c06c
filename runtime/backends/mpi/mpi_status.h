// MpiStatus: an MPI return code as a one-line Status, "mpi: <what> failed: <MPI's own text>".
//
// MPI's error strings (MPI_Error_string) name the error class and its reason, e.g.
// "MPI_ERR_COUNT: invalid count argument"; they are reported only for communicators and windows
// whose error handler returns codes (MPI_ERRORS_RETURN) rather than aborting.
#ifndef HVDRUN_RUNTIME_BACKENDS_MPI_MPI_STATUS_H_
#define HVDRUN_RUNTIME_BACKENDS_MPI_MPI_STATUS_H_

#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun {

// OK for MPI_SUCCESS; otherwise "mpi: <what> failed: <text>", on one line.
Status MpiStatus(std::string_view what, int code);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_BACKENDS_MPI_MPI_STATUS_H_
