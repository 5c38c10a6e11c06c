// Reading an hvdrun rank's environment (common/env_names.h) into RuntimeOptions, for
// Runtime::InitFromEnvironment, BackendFromEnvironment and LaunchedByHvdrun; Horovod's variables
// beyond its tuning in runtime/horovod_environment.h.
//
// Every error names the variable and says what is wrong with it in one line
// (common/environment_reader.h); a missing or empty variable says to run the program under hvdrun. The
// secret's value never appears in an error.
#ifndef HVDRUN_RUNTIME_RUNTIME_ENVIRONMENT_H_
#define HVDRUN_RUNTIME_RUNTIME_ENVIRONMENT_H_

#include <cstdint>
#include <string>

#include "hvdrun/options.h"
#include "hvdrun/status.h"
#include "hvdrun/types.h"
#include "runtime/horovod_environment.h"

namespace hvdrun {

struct RuntimeEnvironment {
  RuntimeOptions options;  // everything but options.store
  std::string rendezvous_address;
  uint16_t rendezvous_port = 0;
  std::string secret_hex;
  // Horovod's other variables: messages, notes, the start timeout (runtime/horovod_environment.h).
  HorovodSettings horovod;
};

// In each, `lookup(name)` returns the variable's value or nullptr when unset (std::getenv in
// production).
StatusOr<RuntimeEnvironment> ReadRuntimeEnvironment(const std::function<const char*(const char*)>& lookup);
// HVDRUN_BACKEND alone; an error as ReadRuntimeEnvironment's.
StatusOr<BackendKind> ReadBackendFromEnvironment(const std::function<const char*(const char*)>& lookup);
// Whether hvdrun started this process: HVDRUN_RANK is set.
bool LaunchedByHvdrun(const std::function<const char*(const char*)>& lookup);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_RUNTIME_ENVIRONMENT_H_
