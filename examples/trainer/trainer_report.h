// What hvdrun-trainer hands on after a run: each rank's report to hvdrun's collector
// (Runtime::SendReport; docs/results.md), whose "summary" member holds the figures hvdrun
// aggregates over ranks, and rank 0's --json file. docs/trainer.md lists every field.
#ifndef HVDRUN_EXAMPLES_TRAINER_TRAINER_REPORT_H_
#define HVDRUN_EXAMPLES_TRAINER_TRAINER_REPORT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "examples/trainer/training_result.h"
#include "hvdrun/status.h"

namespace hvdrun::trainer {

// The run's settings, as they were in effect (defaults resolved, learning rate scaled).
struct RunSettings {
  std::string model;
  bool synthetic = true;
  std::string backend;  // "gloo", "mpi", "nccl"; "none" without hvdrun
  int ranks = 1;
  int rank = 0;
  int local_rank = 0;
  std::string device;  // "cpu", "cuda:1"
  int threads = 0;
  int64_t batch_size = 0;  // per rank
  int64_t image_size = 0;
  double lr = 0;  // in effect: scaled by the number of ranks unless --no-lr-scaling
  double momentum = 0;
  bool lr_scaled = true;
  int warmup_steps = 0;  // synthetic
  int steps = 0;         // synthetic
  int epochs = 0;        // data set
  std::string data_dir;  // data set
  int64_t train_examples_per_rank = 0;
  uint64_t seed = 0;
  CompressionOptions compression;  // the runtime's, in effect
  bool elastic = false;            // --elastic
  int commit_every = 0;            // --elastic
};

// The report of one rank: its settings, every timed step (compute_s, comm_wait_s, step_s,
// img_per_sec, loss), epochs, bytes reduced, the parameter checksum, and "summary"; with --elastic,
// "elastic": commit_every, samples_trained and every round (round, ranks, steps, samples, reform_s).
nlohmann::json RankReport(const RunSettings& settings, const TrainingResult& result);

// The --json document: model, backend, ranks, batch_size, image_size, step_time_s,
// img_per_sec_per_rank, img_per_sec_total, test_accuracy (null for synthetic runs), and more;
// "elastic" as in RankReport.
nlohmann::json RunDocument(const RunSettings& settings, const TrainingResult& result);

// Writes `document` to `path` as a whole or not at all (examples/shared/atomic_file.h). The error
// reads "--json: cannot write 'PATH': REASON".
Status WriteJsonFile(const std::string& path, const nlohmann::json& document);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_TRAINER_REPORT_H_
