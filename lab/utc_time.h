// UtcNow: the wall-clock times hvdrun-lab writes down, in UTC so that runs made on machines in
// different time zones compare, in one of two forms. Thread-safe.
#ifndef HVDRUN_LAB_UTC_TIME_H_
#define HVDRUN_LAB_UTC_TIME_H_

#include <ctime>
#include <string>

namespace hvdrun::lab {

enum class UtcFormat {
  kIso8601,  // "2024-05-01T12:34:56Z": run records, environment.json (docs/lab.md)
  kReport,   // "2024-05-01 12:34 UTC": the line under a report that says when it was written
};

std::string FormatUtc(std::time_t when, UtcFormat format);

// FormatUtc of the current time.
std::string UtcNow(UtcFormat format);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_UTC_TIME_H_
