// ValidateRuntimeOptions: the checks Runtime::Init makes of its options before anything starts.
#ifndef HVDRUN_RUNTIME_RUNTIME_OPTIONS_CHECK_H_
#define HVDRUN_RUNTIME_RUNTIME_OPTIONS_CHECK_H_

#include <string>

#include "hvdrun/options.h"
#include "hvdrun/status.h"

namespace hvdrun {

// OK, or a one-line error beginning "Runtime::Init: " that names the option and its value.
Status ValidateRuntimeOptions(const RuntimeOptions& options);

// The error of `call` (Runtime::Init, or a call with its own compression) for a compression format
// this library does not know, or any on the NCCL backend, whose values are on the GPU; else OK.
Status ValidateCompression(const std::string& call, CompressionFormat format, BackendKind backend);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_RUNTIME_OPTIONS_CHECK_H_
