// ValidateRuntimeOptions: the checks Runtime::Init makes of its options before anything starts.
#ifndef HVDRUN_RUNTIME_RUNTIME_OPTIONS_CHECK_H_
#define HVDRUN_RUNTIME_RUNTIME_OPTIONS_CHECK_H_

#include "hvdrun/options.h"
#include "hvdrun/status.h"

namespace hvdrun {

// OK, or a one-line error beginning "Runtime::Init: " that names the option and its value.
Status ValidateRuntimeOptions(const RuntimeOptions& options);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_RUNTIME_OPTIONS_CHECK_H_
