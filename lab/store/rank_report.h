// RankReport: what the report uses of one rank's report (hvdrun's ranks/rank-N.json, docs/results.md),
// read with the bounds of every number in it.
//
// A rank's report is the program's (hvdrun-trainer's, hvdrun-bench's, a user's), so any member may
// be missing or be the program's own: a member that is missing, or not of the type the report
// reads, is left out. A number the report reads must be within ±kMaxFigure (a sum of a million
// ranks' figures over a thousand runs then stays finite), and "threads" a whole number from 1 to
// kMaxThreads; otherwise the report is refused, naming the file and the member, and `report` leaves
// it out as it leaves out a file it cannot parse.
#ifndef HVDRUN_LAB_STORE_RANK_REPORT_H_
#define HVDRUN_LAB_STORE_RANK_REPORT_H_

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun::lab {

// The largest magnitude of a figure the report reads (1e15 s is 30 million years; 1e15 bytes a
// petabyte).
inline constexpr double kMaxFigure = 1e15;

// One size of hvdrun-bench's "results" list.
struct AllreduceSize {
  double bytes = 0;
  double time_us = 0;
  std::optional<double> busbw_gbps;
};

// One size bin of libhvdrun's response statistics (the report's libhvdrun.responses.bins,
// docs/results.md): the backend calls of the negotiated path whose bytes fall in (lower, upper].
struct ResponseBin {
  double lower_bytes = 0;
  double upper_bytes = 0;
  double responses = 0;
  double tensors = 0;
  double bytes = 0;
  double seconds = 0;
};

struct RankReport {
  int rank = 0;
  std::map<std::string, double> figures;  // the numbers of the report's "summary"
  // "threads" (hvdrun-trainer's): the threads the rank computed with; 0: not said.
  int threads = 0;
  std::string framework;               // "framework" and "framework_version", when the report names them
  std::vector<AllreduceSize> sizes;    // hvdrun-bench's "results": one entry per message size
  std::vector<ResponseBin> responses;  // libhvdrun's response statistics, bins in order; empty without
  // What carried the rank's allreduces ("shm", "shm+gloo", "gloo", "mpi", "nccl"): the report's own
  // "allreduce_path" (hvdrun-bench's, of the Runtime it measured), else libhvdrun's
  // ("libhvdrun.allreduce_path", docs/results.md); empty when the report says neither (results
  // written before libhvdrun named it, or a call-order Runtime that does not compress).
  std::string allreduce_path;
};

// Rank `rank`'s report; `file` names it in errors.
StatusOr<RankReport> RankReportFromJson(int rank, const nlohmann::json& report, const std::string& file);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_STORE_RANK_REPORT_H_
