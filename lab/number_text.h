// NumberText: a number as hvdrun-lab writes it in its charts, reports and progress lines, through
// one printf conversion ("%.3g", "%.1f s", "%.0f%%"). Pure; thread-safe.
#ifndef HVDRUN_LAB_NUMBER_TEXT_H_
#define HVDRUN_LAB_NUMBER_TEXT_H_

#include <string>

namespace hvdrun::lab {

// `value` written by std::snprintf with `format`, which takes exactly one double and may hold other
// text; at most 63 characters, the rest cut. A value that is not finite (which the report's figures,
// bounded where they are read and derived through Ratio, never are) is written "—", never as inf
// or nan.
std::string NumberText(const char* format, double value);

// What NumberText writes for a value that is not finite; the report's "no figure" mark.
inline constexpr const char* kNoNumber = "—";

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_NUMBER_TEXT_H_
