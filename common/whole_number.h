// ParseWholeNumber: the one parser of the counts, ports, ranks, sizes and timeouts that hvdrun's
// programs read from a flag, an environment variable, a config file or a store record.
//
// The form accepted is the strictest one all of them share: an optional '-' and one or more decimal
// digits, nothing else (no '+', no spaces, no base prefix, no fraction). The result says why a text
// is not a whole number in [min, max]; each caller words its own one-line error around it, naming
// the flag, variable or file:line as docs/errors.md shows. Pure and thread-safe.
#ifndef HVDRUN_COMMON_WHOLE_NUMBER_H_
#define HVDRUN_COMMON_WHOLE_NUMBER_H_

#include <cstdint>
#include <string_view>

namespace hvdrun {

enum class WholeNumberProblem {
  kNone,
  kNotWholeNumber,  // empty, or not an optional '-' followed by decimal digits only
  kTooSmall,        // a whole number below min (also one below what 64 bits hold)
  kTooLarge,        // a whole number above max (also one above what 64 bits hold)
};

struct ParsedWholeNumber {
  int64_t value = 0;  // the number when ok(); 0 otherwise
  WholeNumberProblem problem = WholeNumberProblem::kNone;

  bool ok() const { return problem == WholeNumberProblem::kNone; }
  bool out_of_range() const {
    return problem == WholeNumberProblem::kTooSmall || problem == WholeNumberProblem::kTooLarge;
  }
};

// `text` as a whole number in [min, max] (min <= max).
ParsedWholeNumber ParseWholeNumber(std::string_view text, int64_t min, int64_t max);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_WHOLE_NUMBER_H_
