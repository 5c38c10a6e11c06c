// Status and StatusOr<T> are part of libhvdrun's public API; launcher and agent use the same type.
#ifndef HVDRUN_COMMON_STATUS_H_
#define HVDRUN_COMMON_STATUS_H_

#include "hvdrun/status.h"

#endif  // HVDRUN_COMMON_STATUS_H_
