// ParseWholeNumberFlag: the whole numbers on the bundled example programs' command lines
// (hvdrun-trainer's counts and sizes, hvdrun-bench's message sizes).
//
// The examples build as a user's program does, against libhvdrun's public headers only, so they
// cannot use hvdrun's own parser (common/whole_number.h, which is not installed, and which a
// collectives library has no business exporting); this is theirs, written once for all of them.
// It accepts what hvdrun's flags accept: an optional '-' and decimal digits, nothing else, and
// words its errors as hvdrun's flags do (docs/errors.md). Pure and thread-safe.
#ifndef HVDRUN_EXAMPLES_SHARED_WHOLE_NUMBER_FLAG_H_
#define HVDRUN_EXAMPLES_SHARED_WHOLE_NUMBER_FLAG_H_

#include <cstdint>
#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun::examples {

// `text`, the value given to `flag`, as a whole number in [min, max]. Errors:
//   "FLAG: 'TEXT' is not a whole number"   and   "FLAG: TEXT is out of range (MIN to MAX)".
StatusOr<int64_t> ParseWholeNumberFlag(std::string_view flag, std::string_view text, int64_t min,
                                       int64_t max);

}  // namespace hvdrun::examples

#endif  // HVDRUN_EXAMPLES_SHARED_WHOLE_NUMBER_FLAG_H_
