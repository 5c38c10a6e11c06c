#include "runtime/autotune/cycle_tuner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/in_memory_store.h"
#include "runtime/test_job.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

using std::chrono::milliseconds;

constexpr int kRanks = 2;
constexpr int kSteps = 40;
constexpr size_t kCount = 4096;

struct Tuned {
  std::vector<nlohmann::json> negotiation;  // each rank's report's
  std::vector<std::string> warnings;        // rank 0's
};

// Runs kSteps training-like steps (four named allreduces each) on two ranks a host, on `hosts`
// hosts (more than one: the job reduces hierarchically, through shared memory and Gloo), with
// autotuning as `configure` sets it; each rank computes 3 ms longer per step than the one before,
// so their timings differ. `timeline_path(rank)`, when given, is the rank's timeline file. Each
// step starts with `same_name_calls` allreduces of one name, each waited for before the next (as
// Horovod's SyncBatchNorm names every layer's).
Tuned RunTunedJob(const std::function<void(AutotuneOptions&, NegotiationOptions&)>& configure,
                  const std::function<std::string(int)>& timeline_path = nullptr, int steps = kSteps,
                  int hosts = 1, int same_name_calls = 0) {
  auto store = NewInMemoryStore();
  const int size = kRanks * hosts;
  Tuned tuned;
  std::mutex mutex;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(size));
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      RuntimeOptions options = testing::TestOptions(rank, size, store);
      if (hosts > 1) {
        options.local_rank = rank % kRanks;
        options.local_size = kRanks;
        options.cross_rank = rank / kRanks;
        options.cross_size = hosts;
        options.shared_memory = true;
        options.hierarchical_allreduce = true;
      }
      options.order = CollectiveOrder::kNegotiated;
      options.autotune.enabled = true;
      options.autotune.warmup_samples = 1;
      options.autotune.steps_per_sample = 2;
      options.autotune.max_samples = 6;
      options.negotiation.warn = [&](const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex);
        tuned.warnings.push_back(line);
      };
      configure(options.autotune, options.negotiation);
      if (timeline_path) options.timeline.path = timeline_path(rank);
      StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Init(options);
      ASSERT_TRUE(runtime.ok()) << runtime.status().message();
      std::vector<std::vector<float>> grads(4, std::vector<float>(kCount));
      const float average = static_cast<float>(size + 1) / 2;  // of the ranks' rank + 1
      for (int step = 0; step < steps; ++step) {
        std::this_thread::sleep_for(milliseconds(1 + 3 * rank));
        for (int call = 0; call < same_name_calls; ++call) {
          float value = 1;
          ASSERT_TRUE((*runtime)
                          ->AllreduceAsync("bn", &value, &value, 1, DataType::kFloat32, ReduceOp::kSum)
                          .Wait()
                          .ok());
          ASSERT_EQ(value, static_cast<float>(size));
        }
        std::vector<CollectiveHandle> handles;
        for (size_t i = 0; i < grads.size(); ++i) {
          std::fill(grads[i].begin(), grads[i].end(), static_cast<float>(rank + 1));
          handles.push_back((*runtime)->AllreduceAsync("grad" + std::to_string(i), grads[i].data(),
                                                       grads[i].data(), kCount, DataType::kFloat32,
                                                       ReduceOp::kAverage));
        }
        for (CollectiveHandle& handle : handles) ASSERT_TRUE(handle.Wait().ok());
        for (const std::vector<float>& grad : grads) ASSERT_EQ(grad.back(), average) << "step " << step;
      }
      ASSERT_TRUE((*runtime)->SendReport("{}").ok());
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < size; ++rank) {
    StatusOr<std::string> sent = store->Get("report/" + std::to_string(rank), milliseconds(1000));
    if (!sent.ok()) {
      ADD_FAILURE() << sent.status().message();
      continue;
    }
    tuned.negotiation.push_back(nlohmann::json::parse(sent.value())["libhvdrun"]["negotiation"]);
  }
  return tuned;
}

TEST(CycleTuner, EveryRankEndsWithTheSettingRankZeroChoseAndLogged) {
  const std::string log = ::testing::TempDir() + "/cycle_tuner_" + std::to_string(::getpid()) + ".csv";
  const Tuned tuned =
      RunTunedJob([&](AutotuneOptions& autotune, NegotiationOptions&) { autotune.log_file = log; });
  ASSERT_EQ(tuned.negotiation.size(), 2u);
  EXPECT_EQ(tuned.negotiation[0]["fusion_threshold_bytes"], tuned.negotiation[1]["fusion_threshold_bytes"]);
  EXPECT_EQ(tuned.negotiation[0]["cycle_time_ms"], tuned.negotiation[1]["cycle_time_ms"]);

  std::ifstream in(log);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  ::unlink(log.c_str());
  ASSERT_EQ(lines.size(), 1u + 6 + 1);  // the header, six samples, the choice
  EXPECT_EQ(lines[0].rfind("hierarchical_allreduce,hierarchical_allgather,", 0), 0u);
  // The last line is the chosen setting: cycle_time_ms and tensor_fusion_threshold (MiB) as every
  // rank's report has them.
  std::vector<std::string> fields;
  std::stringstream last(lines.back());
  while (std::getline(last, line, ',')) fields.push_back(line);
  ASSERT_EQ(fields.size(), 9u) << lines.back();
  EXPECT_EQ(fields[8], "1");
  EXPECT_NEAR(std::stod(fields[4]), tuned.negotiation[0]["cycle_time_ms"].get<double>(), 0.01);
  EXPECT_NEAR(std::stod(fields[5]) * 1024 * 1024,
              tuned.negotiation[0]["fusion_threshold_bytes"].get<double>(),
              4096.0 + 1024);  // rounded up to a multiple of local_size * 512 B; the log has 6 digits

  ASSERT_EQ(tuned.warnings.size(), 1u);
  EXPECT_EQ(tuned.warnings[0].rfind("autotune: kept fusion threshold ", 0), 0u) << tuned.warnings[0];
  EXPECT_NE(tuned.warnings[0].find("the starting setting's (128 MiB, 1 ms: "), std::string::npos)
      << tuned.warnings[0];
  EXPECT_NE(tuned.warnings[0].find("; 6 samples, 12 steps scored"), std::string::npos) << tuned.warnings[0];
}

// The marks of one rank's timeline named `name`, in the order of their ts.
std::vector<nlohmann::json> Marks(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json trace = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(trace.is_array()) << path << ":\n" << text.str();
  std::vector<nlohmann::json> marks;
  if (!trace.is_array()) return marks;
  for (const nlohmann::json& event : trace) {
    if (event.value("name", "") == name) marks.push_back(event);
  }
  std::sort(marks.begin(), marks.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["ts"].get<double>() < b["ts"].get<double>();
  });
  return marks;
}

TEST(CycleTuner, EveryRanksTimelineMarksEachSettingMeasuredAndTheOneKept) {
  e2e::ScratchDir dir;
  const std::string log = dir.path() + "/tune.csv";
  auto path = [&](int rank) { return dir.path() + "/rank-" + std::to_string(rank) + ".json"; };
  const Tuned tuned =
      RunTunedJob([&](AutotuneOptions& autotune, NegotiationOptions&) { autotune.log_file = log; }, path);
  ASSERT_EQ(tuned.negotiation.size(), 2u);

  // The log's sample lines, in order: what each AUTOTUNE mark must name.
  std::ifstream in(log);
  std::string line;
  std::vector<std::vector<double>> rows;  // cycle_time_ms, tensor_fusion_threshold (MiB)
  std::getline(in, line);                 // the header
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream row(line);
    std::string field;
    while (std::getline(row, field, ',')) fields.push_back(field);
    ASSERT_EQ(fields.size(), 9u) << line;
    rows.push_back({std::stod(fields[4]), std::stod(fields[5])});
  }
  ASSERT_EQ(rows.size(), 6u + 1);  // six samples, the choice

  std::vector<nlohmann::json> first_rank_marks;
  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const std::vector<nlohmann::json> marks = Marks(path(rank), "AUTOTUNE");
    ASSERT_EQ(marks.size(), 6u);  // one where each sample starts, the first after the warm-up
    for (size_t i = 0; i < marks.size(); ++i) {
      EXPECT_EQ(marks[i]["ph"], "i");
      EXPECT_EQ(marks[i]["args"]["sample"], i + 1);
      EXPECT_NEAR(marks[i]["args"]["cycle_time_ms"].get<double>(), rows[i][0], 0.01);
      EXPECT_NEAR(marks[i]["args"]["fusion_threshold_mib"].get<double>(), rows[i][1], 1e-3);
      EXPECT_EQ(marks[i]["args"].contains("previous_score_bytes_per_us"), i > 0);
    }
    const std::vector<nlohmann::json> kept = Marks(path(rank), "AUTOTUNE_KEPT");
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_GT(kept[0]["ts"].get<double>(), marks.back()["ts"].get<double>());
    EXPECT_EQ(kept[0]["args"]["samples"], 6);
    EXPECT_NEAR(kept[0]["args"]["cycle_time_ms"].get<double>(), rows.back()[0], 0.01);
    EXPECT_NEAR(kept[0]["args"]["fusion_threshold_mib"].get<double>(), rows.back()[1], 1e-3);
    EXPECT_EQ(kept[0]["args"]["fusion_threshold_bytes"], tuned.negotiation[rank]["fusion_threshold_bytes"]);
    EXPECT_EQ(kept[0]["args"]["cycle_time_ms"], tuned.negotiation[rank]["cycle_time_ms"]);
    // Every rank marks the same values (the times differ).
    std::vector<nlohmann::json> all = marks;
    all.push_back(kept[0]);
    for (nlohmann::json& mark : all) mark = mark["args"];
    if (rank == 0) {
      first_rank_marks = all;
    } else {
      EXPECT_EQ(all, first_rank_marks);
    }
  }
}

TEST(CycleTuner, AnExplicitCycleTimeStaysWhileTheFusionThresholdIsTuned) {
  const Tuned tuned = RunTunedJob([](AutotuneOptions& autotune, NegotiationOptions& negotiation) {
    autotune.cycle_time_fixed = true;
    negotiation.cycle_time = std::chrono::microseconds(2000);
  });
  ASSERT_EQ(tuned.negotiation.size(), 2u);
  for (const nlohmann::json& negotiation : tuned.negotiation) EXPECT_EQ(negotiation["cycle_time_ms"], 2.0);
  EXPECT_EQ(tuned.negotiation[0]["fusion_threshold_bytes"], tuned.negotiation[1]["fusion_threshold_bytes"]);
  ASSERT_EQ(tuned.warnings.size(), 1u);
  EXPECT_NE(tuned.warnings[0].find("and cycle time 2 ms"), std::string::npos) << tuned.warnings[0];
}

TEST(CycleTuner, BothValuesExplicitLeavesNothingToTune) {
  RuntimeOptions options;
  options.autotune.enabled = true;
  options.autotune.fusion_threshold_fixed = true;
  options.autotune.cycle_time_fixed = true;
  std::vector<std::string> warnings;
  options.negotiation.warn = [&](const std::string& line) { warnings.push_back(line); };
  EXPECT_EQ(CycleTuner::Create(options), nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("nothing to tune"), std::string::npos);
  options.autotune.enabled = false;
  EXPECT_EQ(CycleTuner::Create(options), nullptr);
}

// Column `column` of each line of the CSV log at `path` after its header.
std::vector<std::string> LogColumn(const std::string& path, size_t column) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> values;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream row(line);
    std::string field;
    while (std::getline(row, field, ',')) fields.push_back(field);
    values.push_back(column < fields.size() ? fields[column] : "");
  }
  return values;
}

// RunTunedJob with enough samples for a confirmation, the log written to `log`, and steps for
// `phases` yes/no phases after the search; `configure` sets the rest.
Tuned RunConfirmedJob(const std::string& log, int phases, int hosts,
                      const std::function<void(AutotuneOptions&)>& configure = nullptr) {
  return RunTunedJob(
      [&](AutotuneOptions& autotune, NegotiationOptions&) {
        autotune.log_file = log;
        autotune.max_samples = SettingSearch::kConfirmFrom;
        if (configure) configure(autotune);
      },
      nullptr, 2 * (1 + SettingSearch::kConfirmFrom + phases * SettingSearch::kConfirmSamples) + 4, hosts);
}

// With enough samples for a confirmation, the search is followed by the response cache's phase:
// eight more samples under the setting the search kept, the cache on and off alternately, logged
// with the cache_enabled column; every rank ends with the same cache setting (as its report says).
TEST(CycleTuner, TheResponseCacheIsTriedOffAgainstOnAfterTheSearch) {
  e2e::ScratchDir dir;
  const std::string log = dir.path() + "/tune.csv";
  const Tuned tuned = RunConfirmedJob(log, 1, 1);
  ASSERT_EQ(tuned.negotiation.size(), 2u);
  EXPECT_EQ(tuned.negotiation[0]["response_cache"], tuned.negotiation[1]["response_cache"]);
  const std::vector<std::string> cache = LogColumn(log, 3);
  const std::vector<std::string> cycle = LogColumn(log, 4);
  const size_t search = SettingSearch::kConfirmFrom;
  ASSERT_EQ(cache.size(), search + SettingSearch::kConfirmSamples + 1) << "samples and the choice";
  for (size_t i = 0; i < search; ++i) EXPECT_EQ(cache[i], "1") << "search sample " << i + 1;
  for (size_t i = search; i + 1 < cache.size(); ++i) {
    EXPECT_EQ(cache[i], (i - search) % 2 == 0 ? "1" : "0") << "cache sample " << i + 1;
    EXPECT_EQ(cycle[i], cycle.back()) << "the cache's phase runs under the setting kept";
  }
  EXPECT_EQ(cache.back(), tuned.negotiation[0]["response_cache"].get<bool>() ? "1" : "0");
  ASSERT_EQ(tuned.warnings.size(), 1u);
  EXPECT_NE(tuned.warnings[0].find("; response cache kept o"), std::string::npos) << tuned.warnings[0];
  EXPECT_NE(tuned.warnings[0].find("; 20 samples, 40 steps scored"), std::string::npos) << tuned.warnings[0];
}

// A capacity the user set (HOROVOD_CACHE_CAPACITY) stays as it is: no cache phase.
TEST(CycleTuner, AnExplicitCacheCapacityIsNotTuned) {
  e2e::ScratchDir dir;
  const Tuned tuned = RunConfirmedJob(dir.path() + "/tune.csv", 0, 1, [](AutotuneOptions& autotune) {
    autotune.cache_capacity_fixed = true;
  });
  ASSERT_EQ(tuned.warnings.size(), 1u);
  EXPECT_EQ(tuned.warnings[0].find("response cache"), std::string::npos) << tuned.warnings[0];
  for (const nlohmann::json& negotiation : tuned.negotiation) EXPECT_EQ(negotiation["response_cache"], true);
}

// In a job that reduces hierarchically (2 hosts of 2 ranks), the search is followed by the
// hierarchical allreduce's phase (on and off, the flat ring, alternately, logged in the
// hierarchical_allreduce column), then by the response cache's under the hierarchical choice kept.
// The averages are right under both (RunTunedJob checks every step), and every rank ends with
// the same choices.
TEST(CycleTuner, TheHierarchicalAllreduceIsTriedOffAgainstOnBeforeTheCache) {
  e2e::ScratchDir dir;
  const std::string log = dir.path() + "/tune.csv";
  constexpr size_t kPhaseSamples = SettingSearch::kConfirmSamples;
  const Tuned tuned = RunConfirmedJob(log, 2, /*hosts=*/2);
  ASSERT_EQ(tuned.negotiation.size(), 4u);
  for (const nlohmann::json& negotiation : tuned.negotiation) {
    EXPECT_EQ(negotiation["hierarchical_allreduce"], tuned.negotiation[0]["hierarchical_allreduce"]);
    EXPECT_EQ(negotiation["response_cache"], tuned.negotiation[0]["response_cache"]);
  }
  const std::vector<std::string> hierarchical = LogColumn(log, 0);
  const std::vector<std::string> cache = LogColumn(log, 3);
  const size_t search = SettingSearch::kConfirmFrom;
  ASSERT_EQ(hierarchical.size(), search + 2 * kPhaseSamples + 1) << "samples and the choice";
  for (size_t i = 0; i < search; ++i) EXPECT_EQ(hierarchical[i], "1") << "search sample " << i + 1;
  for (size_t i = search; i < search + kPhaseSamples; ++i) {
    EXPECT_EQ(hierarchical[i], (i - search) % 2 == 0 ? "1" : "0") << "hierarchical sample " << i + 1;
    EXPECT_EQ(cache[i], "1") << "hierarchical sample " << i + 1;
  }
  for (size_t i = search + kPhaseSamples; i + 1 < cache.size(); ++i) {
    EXPECT_EQ(hierarchical[i], hierarchical.back()) << "the cache's phase runs under the choice kept";
    EXPECT_EQ(cache[i], (i - search - kPhaseSamples) % 2 == 0 ? "1" : "0") << "cache sample " << i + 1;
  }
  EXPECT_EQ(hierarchical.back(), tuned.negotiation[0]["hierarchical_allreduce"].get<bool>() ? "1" : "0");
  ASSERT_EQ(tuned.warnings.size(), 1u);
  EXPECT_NE(tuned.warnings[0].find("; hierarchical allreduce kept o"), std::string::npos)
      << tuned.warnings[0];
  EXPECT_NE(tuned.warnings[0].find("; response cache kept o"), std::string::npos) << tuned.warnings[0];
  EXPECT_NE(tuned.warnings[0].find("; 28 samples, 56 steps scored"), std::string::npos) << tuned.warnings[0];
}

// The hierarchical allreduce the user set (HOROVOD_HIERARCHICAL_ALLREDUCE) stays as it is; the log
// says the job runs it. A job on one host does not run it, and the log says that too.
TEST(CycleTuner, AnExplicitHierarchicalAllreduceIsNotTuned) {
  e2e::ScratchDir dir;
  const std::string log = dir.path() + "/tune.csv";
  const Tuned tuned = RunConfirmedJob(log, 0, /*hosts=*/2, [](AutotuneOptions& autotune) {
    autotune.hierarchical_allreduce_fixed = true;
    autotune.cache_capacity_fixed = true;
  });
  ASSERT_EQ(tuned.warnings.size(), 1u);
  EXPECT_EQ(tuned.warnings[0].find("hierarchical"), std::string::npos) << tuned.warnings[0];
  for (const nlohmann::json& negotiation : tuned.negotiation) {
    EXPECT_EQ(negotiation["hierarchical_allreduce"], true);
  }
  for (const std::string& value : LogColumn(log, 0)) EXPECT_EQ(value, "1");

  const std::string one_host_log = dir.path() + "/one-host.csv";
  const Tuned one_host =
      RunTunedJob([&](AutotuneOptions& autotune, NegotiationOptions&) { autotune.log_file = one_host_log; });
  for (const std::string& value : LogColumn(one_host_log, 0)) EXPECT_EQ(value, "0");
  for (const nlohmann::json& negotiation : one_host.negotiation) {
    EXPECT_EQ(negotiation["hierarchical_allreduce"], false);
  }
}

// A name that runs several times a step cuts the first steps short; once the gradients' rounds show
// it, every rank starts the tuning again at the same cycle, from the warm-up and the starting
// setting: the log holds the samples after that alone, every rank marks AUTOTUNE_RESTART at the
// same point, and the end line says it started again.
TEST(CycleTuner, ANameRunSeveralTimesAStepStartsTheTuningAgainOnceSeen) {
  e2e::ScratchDir dir;
  const std::string log = dir.path() + "/tune.csv";
  auto path = [&](int rank) { return dir.path() + "/rank-" + std::to_string(rank) + ".json"; };
  const Tuned tuned = RunTunedJob(
      [&](AutotuneOptions& autotune, NegotiationOptions&) {
        autotune.log_file = log;
        autotune.warmup_samples = 0;
      },
      path, kSteps, 1, /*same_name_calls=*/4);
  ASSERT_EQ(tuned.negotiation.size(), 2u);
  EXPECT_EQ(tuned.negotiation[0]["fusion_threshold_bytes"], tuned.negotiation[1]["fusion_threshold_bytes"]);
  EXPECT_EQ(tuned.negotiation[0]["cycle_time_ms"], tuned.negotiation[1]["cycle_time_ms"]);
  ASSERT_EQ(tuned.warnings.size(), 1u);
  EXPECT_NE(tuned.warnings[0].find("; 6 samples, 12 steps scored (started again 1 time: "), std::string::npos)
      << tuned.warnings[0];
  EXPECT_EQ(LogColumn(log, 0).size(), 6u + 1) << "the samples after the start again, and the choice";
  std::vector<nlohmann::json> first_rank_marks;
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::vector<nlohmann::json> restarts = Marks(path(rank), "AUTOTUNE_RESTART");
    ASSERT_EQ(restarts.size(), 1u) << "rank " << rank;
    EXPECT_NEAR(restarts[0]["args"]["cycle_time_ms"].get<double>(), 1.0, 1e-9);
    EXPECT_NEAR(restarts[0]["args"]["fusion_threshold_mib"].get<double>(), 128.0, 1e-9);
    std::vector<nlohmann::json> all = Marks(path(rank), "AUTOTUNE");
    all.insert(all.begin(), restarts[0]);
    for (nlohmann::json& mark : all) mark = mark["args"];
    if (rank == 0) {
      first_rank_marks = all;
    } else {
      EXPECT_EQ(all, first_rank_marks);
    }
  }
}

}  // namespace
}  // namespace hvdrun
