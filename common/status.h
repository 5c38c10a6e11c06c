// Status and StatusOr<T> belong to libhvdrun's public vocabulary (hvdrun/status.h, the
// hvdrun_vocabulary target), the bottom layer that common/ builds on; launcher and agent use the
// same type. This header is that one under common/'s name.
#ifndef HVDRUN_COMMON_STATUS_H_
#define HVDRUN_COMMON_STATUS_H_

#include "hvdrun/status.h"

#endif  // HVDRUN_COMMON_STATUS_H_
