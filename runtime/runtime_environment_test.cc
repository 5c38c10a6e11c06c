#include "runtime/runtime_environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <string>

#include "common/env_names.h"
#include "hvdrun/runtime.h"

namespace hvdrun {
namespace {

class RuntimeEnvironmentTest : public ::testing::Test {
 protected:
  RuntimeEnvironmentTest()
      : values_({{env::kRank, "2"},
                 {env::kSize, "4"},
                 {env::kLocalRank, "0"},
                 {env::kLocalSize, "2"},
                 {env::kCrossRank, "1"},
                 {env::kCrossSize, "2"},
                 {env::kBackend, "gloo"},
                 {env::kRendezvousAddr, "10.0.0.1"},
                 {env::kRendezvousPort, "29500"},
                 {env::kSecret, std::string(64, 'a')},
                 {env::kHostAddr, "10.0.0.2"}}) {}

  StatusOr<RuntimeEnvironment> Read() {
    return ReadRuntimeEnvironment([this](const char* name) -> const char* {
      auto found = values_.find(name);
      return found == values_.end() ? nullptr : found->second.c_str();
    });
  }
  std::string ReadError() {
    StatusOr<RuntimeEnvironment> environment = Read();
    return environment.ok() ? "OK" : environment.status().message();
  }

  std::map<std::string, std::string> values_;
};

TEST_F(RuntimeEnvironmentTest, AnElasticJobsVariablesMakeTheRuntimeElastic) {
  StatusOr<RuntimeEnvironment> fixed = Read();
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_FALSE(fixed->options.elastic.enabled);

  values_[env::kElastic] = "1";
  EXPECT_EQ(ReadError(), "HVDRUN_WORKER_ID is not set: run this program under hvdrun");
  values_[env::kWorkerId] = "node-a/1/3";
  values_[env::kRound] = "2";
  StatusOr<RuntimeEnvironment> elastic = Read();
  ASSERT_TRUE(elastic.ok()) << elastic.status().message();
  EXPECT_TRUE(elastic->options.elastic.enabled);
  EXPECT_EQ(elastic->options.elastic.worker_id, "node-a/1/3");
  EXPECT_EQ(elastic->options.elastic.round, 2);
  EXPECT_EQ(elastic->options.elastic.assignment_timeout, std::chrono::seconds(600));
  values_[env::kElasticTimeoutSeconds] = "30";
  EXPECT_EQ(Read()->options.elastic.assignment_timeout, std::chrono::seconds(30));
  values_[env::kElastic] = "yes";
  EXPECT_EQ(ReadError(), "HVDRUN_ELASTIC='yes' is not 1 or 0");
}

TEST_F(RuntimeEnvironmentTest, NegotiationTuningComesFromHorovodsVariables) {
  StatusOr<RuntimeEnvironment> defaults = Read();
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->options.negotiation.fusion_threshold_bytes, size_t{128} << 20);
  EXPECT_EQ(defaults->options.negotiation.cycle_time, std::chrono::milliseconds(1));
  EXPECT_EQ(defaults->options.negotiation.cache_capacity, 1024U);
  EXPECT_EQ(defaults->options.negotiation.stall_warning, std::chrono::seconds(60));

  values_[env::kHorovodFusionThreshold] = "67108864";
  values_[env::kHorovodCycleTime] = "2.5";
  values_[env::kHorovodCacheCapacity] = "0";
  values_[env::kHorovodStallCheckTime] = "5";
  StatusOr<RuntimeEnvironment> tuned = Read();
  ASSERT_TRUE(tuned.ok()) << tuned.status().message();
  EXPECT_EQ(tuned->options.negotiation.fusion_threshold_bytes, size_t{64} << 20);
  EXPECT_EQ(tuned->options.negotiation.cycle_time, std::chrono::microseconds(2500));
  EXPECT_EQ(tuned->options.negotiation.cache_capacity, 0U);
  EXPECT_EQ(tuned->options.negotiation.stall_warning, std::chrono::seconds(5));

  values_[env::kHorovodCycleTime] = "5ms";
  EXPECT_EQ(ReadError(), "HOROVOD_CYCLE_TIME='5ms' is not a number of milliseconds from 0 to 60000");
  values_[env::kHorovodCycleTime] = "5";
  values_[env::kHorovodFusionThreshold] = "-1";
  EXPECT_EQ(ReadError(), "HOROVOD_FUSION_THRESHOLD='-1' is not a whole number from 0 to 1099511627776");
}

TEST_F(RuntimeEnvironmentTest, AutotuneComesFromHorovodsVariablesAndKeepsExplicitValuesFixed) {
  StatusOr<RuntimeEnvironment> defaults = Read();
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_FALSE(defaults->options.autotune.enabled);
  values_[env::kHorovodAutotuneWarmupSamples] = "x";  // read only when autotuning is on, as Horovod
  EXPECT_EQ(ReadError(), "OK");

  values_[env::kHorovodAutotune] = "1";
  EXPECT_EQ(ReadError(), "HOROVOD_AUTOTUNE_WARMUP_SAMPLES='x' is not a whole number from 0 to 100000");
  values_[env::kHorovodAutotuneWarmupSamples] = "0";
  values_[env::kHorovodAutotuneLog] = "/tmp/tune.csv";
  values_[env::kHorovodAutotuneStepsPerSample] = "4";
  values_[env::kHorovodAutotuneBayesOptMaxSamples] = "9";
  values_[env::kHorovodAutotuneGaussianProcessNoise] = "0.25";
  values_[env::kHorovodCycleTime] = "3";
  StatusOr<RuntimeEnvironment> tuned = Read();
  ASSERT_TRUE(tuned.ok()) << tuned.status().message();
  const AutotuneOptions& autotune = tuned->options.autotune;
  EXPECT_TRUE(autotune.enabled);
  EXPECT_EQ(autotune.log_file, "/tmp/tune.csv");
  EXPECT_EQ(autotune.warmup_samples, 0);
  EXPECT_EQ(autotune.steps_per_sample, 4);
  EXPECT_EQ(autotune.max_samples, 9);
  EXPECT_EQ(autotune.gaussian_process_noise, 0.25);
  EXPECT_FALSE(autotune.fusion_threshold_fixed);
  EXPECT_TRUE(autotune.cycle_time_fixed);
  EXPECT_FALSE(autotune.cache_capacity_fixed);
  values_[env::kHorovodCacheCapacity] = "512";
  StatusOr<RuntimeEnvironment> cache_set = Read();
  ASSERT_TRUE(cache_set.ok()) << cache_set.status().message();
  EXPECT_TRUE(cache_set->options.autotune.cache_capacity_fixed);
  EXPECT_FALSE(cache_set->options.autotune.hierarchical_allreduce_fixed);
  values_[env::kHorovodHierarchicalAllreduce] = "1";
  StatusOr<RuntimeEnvironment> hierarchical_set = Read();
  ASSERT_TRUE(hierarchical_set.ok()) << hierarchical_set.status().message();
  EXPECT_TRUE(hierarchical_set->options.autotune.hierarchical_allreduce_fixed);
  values_.erase(env::kHorovodHierarchicalAllreduce);

  values_[env::kHorovodAutotuneStepsPerSample] = "0";
  EXPECT_EQ(ReadError(), "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE='0' is not a whole number from 1 to 100000");
  values_[env::kHorovodAutotuneStepsPerSample] = "4";
  values_[env::kHorovodAutotuneGaussianProcessNoise] = "1.5";
  EXPECT_EQ(ReadError(), "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE='1.5' is not a number from 0 to 1");
}

TEST_F(RuntimeEnvironmentTest, SharedMemoryIsOnUnlessHvdrunShmIsZero) {
  StatusOr<RuntimeEnvironment> defaults = Read();
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_TRUE(defaults->options.shared_memory);
  values_[env::kSharedMemory] = "0";
  EXPECT_FALSE(Read()->options.shared_memory);
  values_[env::kSharedMemory] = "off";
  EXPECT_EQ(ReadError(), "HVDRUN_SHM='off' is not 1 or 0");
  values_[env::kSharedMemory] = "1";
  EXPECT_TRUE(Read()->options.hierarchical_allreduce);
  values_[env::kHorovodHierarchicalAllreduce] = "0";
  EXPECT_FALSE(Read()->options.hierarchical_allreduce);
  values_[env::kHorovodHierarchicalAllreduce] = "1";
  EXPECT_TRUE(Read()->options.hierarchical_allreduce);
}

TEST_F(RuntimeEnvironmentTest, CompressionComesFromHvdrunsVariables) {
  StatusOr<RuntimeEnvironment> defaults = Read();
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->options.compression.format, CompressionFormat::kNone);
  EXPECT_TRUE(defaults->options.compression.scaling);
  EXPECT_TRUE(defaults->options.compression.safe_cast);
  EXPECT_TRUE(defaults->options.compression.float32_sums);
  EXPECT_TRUE(defaults->options.compression.error_feedback);

  values_[env::kCompression] = "fp8";
  values_[env::kFp8Scaling] = "0";
  values_[env::kFp8SafeCast] = "0";
  values_[env::kFp8Float32Sums] = "false";
  values_[env::kErrorFeedback] = "0";
  StatusOr<RuntimeEnvironment> naive = Read();
  ASSERT_TRUE(naive.ok()) << naive.status().message();
  EXPECT_EQ(naive->options.compression.format, CompressionFormat::kFloat8E4M3);
  EXPECT_FALSE(naive->options.compression.scaling);
  EXPECT_FALSE(naive->options.compression.safe_cast);
  EXPECT_FALSE(naive->options.compression.float32_sums);
  EXPECT_FALSE(naive->options.compression.error_feedback);

  values_[env::kCompression] = "fp8-e5m2";
  EXPECT_EQ(Read()->options.compression.format, CompressionFormat::kFloat8E5M2);
  values_[env::kCompression] = "fp4";
  EXPECT_EQ(ReadError(),
            "HVDRUN_COMPRESSION='fp4' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
  values_[env::kCompression] = "bf16";
  values_[env::kErrorFeedback] = "off";
  EXPECT_EQ(ReadError(), "HVDRUN_ERROR_FEEDBACK='off' is not 1 or 0");
}

TEST_F(RuntimeEnvironmentTest, ReadsEveryVariable) {
  StatusOr<RuntimeEnvironment> environment = Read();
  ASSERT_TRUE(environment.ok()) << environment.status().message();
  const RuntimeOptions& options = environment->options;
  EXPECT_EQ(options.rank, 2);
  EXPECT_EQ(options.size, 4);
  EXPECT_EQ(options.local_rank, 0);
  EXPECT_EQ(options.local_size, 2);
  EXPECT_EQ(options.cross_rank, 1);
  EXPECT_EQ(options.cross_size, 2);
  EXPECT_EQ(options.backend, BackendKind::kGloo);
  EXPECT_EQ(options.host_address, "10.0.0.2");
  EXPECT_EQ(environment->rendezvous_address, "10.0.0.1");
  EXPECT_EQ(environment->rendezvous_port, 29500);
  EXPECT_EQ(environment->secret_hex, std::string(64, 'a'));
}

TEST_F(RuntimeEnvironmentTest, EachMissingVariableIsNamed) {
  for (const char* name :
       {env::kRank, env::kSize, env::kLocalRank, env::kLocalSize, env::kCrossRank, env::kCrossSize,
        env::kBackend, env::kRendezvousAddr, env::kRendezvousPort, env::kSecret, env::kHostAddr}) {
    const std::string saved = values_[name];
    values_.erase(name);
    // A rank that hvdrun started (HVDRUN_RANK is set) without a backend is told which flag to add.
    EXPECT_EQ(ReadError(),
              std::string(name) + (std::string(name) == env::kBackend
                                       ? " is not set: hvdrun started this rank without a backend; run "
                                         "hvdrun with --gloo (or --mpi, --nccl)"
                                       : " is not set: run this program under hvdrun"));
    values_[name] = "";
    EXPECT_EQ(ReadError(), std::string(name) + " is empty: run this program under hvdrun");
    values_[name] = saved;
  }
  EXPECT_EQ(ReadError(), "OK");
}

TEST_F(RuntimeEnvironmentTest, BadValuesAreNamed) {
  values_[env::kRank] = "two";
  EXPECT_EQ(ReadError(), "HVDRUN_RANK='two' is not a whole number from 0 to 16777216");
  values_[env::kRank] = "4";
  EXPECT_EQ(ReadError(), "HVDRUN_RANK=4 is not below HVDRUN_SIZE=4");
  values_[env::kRank] = "1";
  values_[env::kSize] = "0";
  EXPECT_EQ(ReadError(), "HVDRUN_SIZE='0' is not a whole number from 1 to 16777216");
  values_[env::kSize] = "4";
  values_[env::kBackend] = "tcp";
  EXPECT_EQ(ReadError(), "HVDRUN_BACKEND='tcp' is not a backend (gloo, mpi, nccl)");
  values_[env::kBackend] = "nccl";
  values_[env::kRendezvousPort] = "70000";
  EXPECT_EQ(ReadError(), "HVDRUN_RENDEZVOUS_PORT='70000' is not a whole number from 1 to 65535");
  values_[env::kRendezvousPort] = "12 ";
  EXPECT_EQ(ReadError(), "HVDRUN_RENDEZVOUS_PORT='12 ' is not a whole number from 1 to 65535");
}

TEST(RuntimeInitFromEnvironmentTest, OutsideHvdrunSaysSo) {
  for (const char* name : {env::kRank, env::kSize, env::kBackend}) unsetenv(name);
  StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::InitFromEnvironment();
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.status().message(), "HVDRUN_RANK is not set: run this program under hvdrun");
}

}  // namespace
}  // namespace hvdrun
