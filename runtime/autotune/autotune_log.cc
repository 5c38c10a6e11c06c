#include "runtime/autotune/autotune_log.h"

#include <sstream>
#include <utility>

#include "common/atomic_file.h"

namespace hvdrun {

std::string AutotuneLog::Header() {
  return "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,"
         "tensor_fusion_threshold,score,score_spread,chosen\n";
}

std::string AutotuneLog::Line(const Row& row) {
  std::ostringstream line;
  line.precision(6);
  line << (row.hierarchical_allreduce ? 1 : 0) << ",0,0," << (row.cache_enabled ? 1 : 0) << ','
       << row.cycle_time_ms << ',' << row.fusion_threshold_mib << ',' << row.score_bytes_per_us << ','
       << row.spread_bytes_per_us << ',' << (row.chosen ? 1 : 0) << '\n';
  return line.str();
}

AutotuneLog::AutotuneLog(std::string path) : path_(std::move(path)), text_(Header()) {}

Status AutotuneLog::Add(const Row& row) {
  text_ += Line(row);
  if (path_.empty()) return Status::Ok();
  return WriteFileAtomically(path_, text_);
}

Status AutotuneLog::Clear() {
  text_ = Header();
  if (path_.empty()) return Status::Ok();
  return WriteFileAtomically(path_, text_);
}

}  // namespace hvdrun
