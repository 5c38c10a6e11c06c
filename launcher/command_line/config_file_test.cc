#include "launcher/command_line/config_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launcher/command_line/option_table.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun {
namespace {

// "--option=value @ line: key" per setting.
std::vector<std::string> Read(const std::string& yaml) {
  e2e::ScratchDir dir;
  StatusOr<std::vector<ConfigSetting>> settings = ReadConfigFile(dir.WriteFile("c.yaml", yaml));
  EXPECT_TRUE(settings.ok()) << settings.status().message();
  std::vector<std::string> read;
  for (const ConfigSetting& setting : settings.ok() ? settings.value() : std::vector<ConfigSetting>{}) {
    read.push_back(CanonicalName(OptionTable()[setting.row]) + "=" + setting.value + " @" +
                   setting.origin.substr(setting.origin.rfind(':', setting.origin.find(": ") - 1)));
  }
  return read;
}

TEST(ConfigFile, EverySectionOfHorovodrunsFile) {
  EXPECT_EQ(Read("controller: Gloo\n"
                 "params:\n"
                 "  fusion_threshold_mb: 64\n"
                 "  cache_capacity: 2048\n"
                 "  hierarchical_allreduce: false\n"
                 "  torus_allreduce: yes\n"
                 "timeline:\n"
                 "  filename: /tmp/t.json\n"
                 "  mark_cycles: false\n"
                 "stall_check:\n"
                 "  enabled: true\n"
                 "  shutdown_time_seconds: 120\n"
                 "library_options:\n"
                 "  mpi_threads_disable: true\n"
                 "  num_nccl_streams: 2\n"
                 "  thread_affinity: 0,1\n"
                 "logging:\n"
                 "  level: WARNING\n"
                 "  with_timestamp: false\n"),
            (std::vector<std::string>{
                "--gloo= @:1: controller",
                "--fusion-threshold-mb=64 @:3: params.fusion_threshold_mb",
                "--cache-capacity=2048 @:4: params.cache_capacity",
                "--no-hierarchical-allreduce= @:5: params.hierarchical_allreduce",
                "--torus-allreduce= @:6: params.torus_allreduce",
                "--timeline-filename=/tmp/t.json @:8: timeline.filename",
                "--no-timeline-mark-cycles= @:9: timeline.mark_cycles",
                "--stall-check= @:11: stall_check.enabled",
                "--stall-check-shutdown-time-seconds=120 @:12: stall_check.shutdown_time_seconds",
                "--mpi-threads-disable= @:14: library_options.mpi_threads_disable",
                "--num-nccl-streams=2 @:15: library_options.num_nccl_streams",
                "--thread-affinity=0,1 @:16: library_options.thread_affinity",
                "--log-level=WARNING @:18: logging.level",
                "--log-without-timestamp= @:19: logging.with_timestamp",
            }));
}

TEST(ConfigFile, EmptyFilesSectionsAndKeysSetNothing) {
  EXPECT_TRUE(Read("").empty());
  EXPECT_TRUE(Read("params:\nlogging:\n  level:\nautotune:\n  enabled: false\n").empty());
}

TEST(ConfigFile, TheAutotuneSectionIsHorovodrunsOptions) {
  EXPECT_EQ(Read("autotune:\n"
                 "  enabled: true\n"
                 "  log_file: tune.csv\n"
                 "  warmup_samples: 1\n"
                 "  steps_per_sample: 5\n"
                 "  bayes_opt_max_samples: 8\n"
                 "  gaussian_process_noise: 0.5\n"),
            (std::vector<std::string>{
                "--autotune= @:2: autotune.enabled",
                "--autotune-log-file=tune.csv @:3: autotune.log_file",
                "--autotune-warmup-samples=1 @:4: autotune.warmup_samples",
                "--autotune-steps-per-sample=5 @:5: autotune.steps_per_sample",
                "--autotune-bayes-opt-max-samples=8 @:6: autotune.bayes_opt_max_samples",
                "--autotune-gaussian-process-noise=0.5 @:7: autotune.gaussian_process_noise",
            }));
  // enabled: false turns nothing on; the other keys apply when --autotune does, as in horovodrun.
  EXPECT_EQ(Read("autotune:\n  enabled: false\n  warmup_samples: 2\n"),
            (std::vector<std::string>{"--autotune-warmup-samples=2 @:3: autotune.warmup_samples"}));
  e2e::ScratchDir dir;
  StatusOr<std::vector<ConfigSetting>> settings =
      ReadConfigFile(dir.WriteFile("c.yaml", "autotune:\n  warmup: 5\n"));
  ASSERT_FALSE(settings.ok());
  EXPECT_NE(settings.status().message().find(":2: autotune.warmup: not a key of horovodrun's config file "
                                             "(autotune: enabled, log_file, warmup_samples"),
            std::string::npos)
      << settings.status().message();
}

TEST(ConfigFile, ShapesThatAreNotHorovodrunsAreErrors) {
  e2e::ScratchDir dir;
  const std::string path = dir.path() + "/c.yaml";
  auto error = [&](const std::string& yaml) {
    StatusOr<std::vector<ConfigSetting>> settings = ReadConfigFile(dir.WriteFile("c.yaml", yaml));
    EXPECT_FALSE(settings.ok()) << yaml;
    return settings.ok() ? "" : settings.status().message();
  };
  EXPECT_EQ(error("- params\n"),
            "--config-file: " + path + ": not a mapping of horovodrun's config sections");
  EXPECT_EQ(error("params: 3\n"),
            "--config-file: " + path +
                ":1: params: expected a mapping of fusion_threshold_mb, cycle_time_ms, cache_capacity, "
                "hierarchical_allreduce, hierarchical_allgather, torus_allreduce");
  EXPECT_EQ(error("logging:\n  level: [INFO]\n"),
            "--config-file: " + path + ":2: logging.level: expected one value, not a list or a mapping");
  EXPECT_EQ(error("params: {a: [}\n").rfind("--config-file: " + path + ":1: not valid YAML: ", 0), 0u);
}

// A file nested 100,000 deep once gave yaml-cpp's "bad file"; /dev/zero was read forever.
TEST(ConfigFile, TooDeepOrTooLargeIsRefusedInOneLine) {
  e2e::ScratchDir dir;
  const std::string path =
      dir.WriteFile("c.yaml", "params: " + std::string(100000, '[') + std::string(100000, ']'));
  StatusOr<std::vector<ConfigSetting>> settings = ReadConfigFile(path);
  ASSERT_FALSE(settings.ok());
  EXPECT_EQ(settings.status().message(),
            "--config-file: " + path +
                ":1: maps and lists nested deeper than 8 levels (horovodrun's config file has sections of "
                "settings: two levels)");
  settings = ReadConfigFile("/dev/zero");
  ASSERT_FALSE(settings.ok());
  EXPECT_EQ(settings.status().message(),
            "--config-file: '/dev/zero' holds more than 1 MiB; not a config file");
}

}  // namespace
}  // namespace hvdrun
