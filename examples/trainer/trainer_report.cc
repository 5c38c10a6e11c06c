#include "examples/trainer/trainer_report.h"

#include "examples/shared/atomic_file.h"

namespace hvdrun::trainer {
namespace {

nlohmann::json Settings(const RunSettings& s) {
  nlohmann::json settings = {{"model", s.model},
                             {"mode", s.synthetic ? "synthetic" : "dataset"},
                             {"backend", s.backend},
                             {"ranks", s.ranks},
                             {"device", s.device},
                             {"threads", s.threads},
                             {"batch_size", s.batch_size},
                             {"image_size", s.image_size},
                             {"lr", s.lr},
                             {"lr_scaled_by_ranks", s.lr_scaled},
                             {"lr_schedule", s.synthetic ? "constant" : "cosine"},
                             {"momentum", s.momentum},
                             {"seed", s.seed}};
  settings["compression"] = {{"format", CompressionFormatName(s.compression.format)}};
  if (s.compression.format == CompressionFormat::kFloat8E4M3 ||
      s.compression.format == CompressionFormat::kFloat8E5M2) {
    settings["compression"]["scaling"] = s.compression.scaling;
    settings["compression"]["safe_cast"] = s.compression.safe_cast;
    settings["compression"]["float32_sums"] = s.compression.float32_sums;
    settings["compression"]["error_feedback"] = s.compression.error_feedback;
  }
  if (s.synthetic) {
    settings["warmup_steps"] = s.warmup_steps;
    settings["steps"] = s.steps;
  } else {
    settings["epochs"] = s.epochs;
    settings["data_dir"] = s.data_dir;
    settings["train_examples_per_rank"] = s.train_examples_per_rank;
  }
  return settings;
}

nlohmann::json Epochs(const TrainingResult& result) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const EpochRecord& e : result.epochs) {
    epochs.push_back({{"epoch", e.epoch},
                      {"train_loss", e.train_loss},
                      {"test_accuracy", e.test_accuracy},
                      {"test_examples", e.test_examples},
                      {"seconds", e.seconds}});
  }
  return epochs;
}

nlohmann::json TestAccuracy(const TrainingResult& result) {
  return result.test_accuracy ? nlohmann::json(*result.test_accuracy) : nlohmann::json(nullptr);
}

// --elastic: the rounds, and the examples trained into the final model, each once.
nlohmann::json Elastic(const RunSettings& s, const TrainingResult& result) {
  nlohmann::json rounds = nlohmann::json::array();
  for (const RoundRecord& r : result.rounds) {
    rounds.push_back({{"round", r.round},
                      {"ranks", r.ranks},
                      {"steps", r.steps},
                      {"samples", r.samples},
                      {"reform_s", r.reform_s}});
  }
  return {{"commit_every", s.commit_every}, {"samples_trained", result.samples_trained}, {"rounds", rounds}};
}

}  // namespace

nlohmann::json RankReport(const RunSettings& settings, const TrainingResult& result) {
  const StepSummary mine = SummarizeSteps(result.steps);
  nlohmann::json steps = nlohmann::json::array();
  for (const StepRecord& step : result.steps) {
    steps.push_back({{"compute_s", step.compute_s},
                     {"comm_wait_s", step.comm_wait_s},
                     {"comm_overlapped_s", step.comm_overlapped_s},
                     {"step_s", step.step_s},
                     {"img_per_sec", step.img_per_sec()},
                     {"loss", step.loss}});
  }
  // The figures hvdrun aggregates over ranks (mean, min, max): this rank's own, and the group's,
  // which are equal on every rank.
  nlohmann::json summary = {{"step_time_s", mine.mean_step_s},
                            {"compute_time_s", mine.mean_compute_s},
                            {"comm_wait_s", mine.mean_comm_wait_s},
                            {"comm_overlapped_s", mine.mean_comm_overlapped_s},
                            {"bytes_reduced_per_step", result.bytes_reduced_per_step},
                            {"img_per_sec", mine.img_per_sec},
                            {"img_per_sec_total", result.group.img_per_sec_total},
                            {"bytes_reduced", result.bytes_reduced},
                            {"wall_s", result.wall_s}};
  if (result.test_accuracy) summary["test_accuracy"] = *result.test_accuracy;
  if (!result.epochs.empty()) summary["train_loss"] = result.epochs.back().train_loss;

  nlohmann::json report = Settings(settings);
  report["program"] = "hvdrun-trainer";
  report["rank"] = settings.rank;
  report["local_rank"] = settings.local_rank;
  report["steps_run"] = result.steps_run;
  report["timed_steps"] = steps;
  report["epochs_run"] = Epochs(result);
  report["bytes_reduced_per_step"] = result.bytes_reduced_per_step;
  report["bytes_reduced"] = result.bytes_reduced;
  report["parameter_tensors"] = result.parameter_tensors;
  report["reductions_overlapped_with_backward"] = result.overlapped_reductions;
  report["test_accuracy"] = TestAccuracy(result);
  report["parameter_checksum"] = result.parameter_checksum;
  report["summary"] = summary;
  if (settings.elastic) report["elastic"] = Elastic(settings, result);
  return report;
}

nlohmann::json RunDocument(const RunSettings& settings, const TrainingResult& result) {
  nlohmann::json document = Settings(settings);
  document["step_time_s"] = result.group.step_time_s;
  document["comm_wait_s"] = result.group.comm_wait_s;
  document["img_per_sec_per_rank"] = result.group.img_per_sec_per_rank;
  document["img_per_sec_total"] = result.group.img_per_sec_total;
  document["test_accuracy"] = TestAccuracy(result);
  document["epochs_run"] = Epochs(result);
  document["bytes_reduced_per_step"] = result.bytes_reduced_per_step;
  if (result.compression.float32_wire_bytes > 0) {
    // Rank 0's bytes on the wire beside what float32 would have sent.
    document["compression"]["wire_bytes"] = result.compression.wire_bytes;
    document["compression"]["float32_wire_bytes"] = result.compression.float32_wire_bytes;
    document["compression"]["wire_ratio"] = static_cast<double>(result.compression.wire_bytes) /
                                            static_cast<double>(result.compression.float32_wire_bytes);
  }
  document["parameter_checksum"] = result.parameter_checksum;
  document["wall_s"] = result.wall_s;
  if (settings.elastic) document["elastic"] = Elastic(settings, result);
  return document;
}

Status WriteJsonFile(const std::string& path, const nlohmann::json& document) {
  Status status = examples::WriteFileAtomically(path, document.dump(2) + "\n");
  if (!status.ok()) return Status::Error("--json: " + status.message());
  return status;
}

}  // namespace hvdrun::trainer
