// ReadConfigFile: horovodrun's --config-file, a YAML mapping of sections, read into the option
// table's rows (option_table.h) that its keys set:
//
//   controller: gloo | mpi                     --gloo, --mpi
//   params:          fusion_threshold_mb, cycle_time_ms, cache_capacity,
//                    hierarchical_allreduce, hierarchical_allgather, torus_allreduce (true|false)
//   timeline:        filename, mark_cycles (true|false)
//   stall_check:     enabled (true|false), warning_time_seconds, shutdown_time_seconds
//   library_options: mpi_threads_disable (true|false), num_nccl_streams, thread_affinity,
//                    gloo_timeout_seconds
//   logging:         level, with_timestamp (true|false)
//   autotune:        enabled (true|false), log_file, warmup_samples, steps_per_sample,
//                    bayes_opt_max_samples, gaussian_process_noise (enabled false or absent: the
//                    others apply only with --autotune, as in horovodrun)
//
// A key of the table is the row's OptionRow::config_key. A key with no value (`cycle_time_ms:`)
// sets nothing, as in horovodrun. Anything else is an error naming file:line and the key: a key
// horovodrun does not have, a value that is not a scalar (or not a boolean where one is expected).
// Which of the settings apply is the caller's: the command line wins.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_CONFIG_FILE_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_CONFIG_FILE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "hvdrun/status.h"

namespace hvdrun {

struct ConfigSetting {
  size_t row = 0;      // the option table's row
  std::string value;   // the YAML scalar as written; empty for a switch
  std::string origin;  // "cfg.yaml:3: params.cycle_time_ms", for errors
};

// The settings of the file at `path`, in the file's order.
StatusOr<std::vector<ConfigSetting>> ReadConfigFile(const std::string& path);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_CONFIG_FILE_H_
