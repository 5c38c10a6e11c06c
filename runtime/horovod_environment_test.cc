#include "runtime/horovod_environment.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <map>
#include <string>

#include "common/env_names.h"

namespace hvdrun {
namespace {

class HorovodEnvironmentTest : public ::testing::Test {
 protected:
  HorovodEnvironmentTest() {
    options_.rank = 0;
    options_.size = 2;
    options_.local_rank = 1;
    options_.local_size = 2;
    options_.backend = BackendKind::kGloo;
  }

  StatusOr<HorovodSettings> Read() {
    return ReadHorovodSettings(EnvironmentReader(LookupIn(values_), "hint"), options_);
  }
  std::string ReadError() {
    StatusOr<HorovodSettings> settings = Read();
    return settings.ok() ? "OK" : settings.status().message();
  }
  std::vector<std::string> Notes() {
    StatusOr<HorovodSettings> settings = Read();
    EXPECT_TRUE(settings.ok()) << settings.status().message();
    return settings.ok() ? settings.value().notes : std::vector<std::string>{};
  }

  std::map<std::string, std::string> values_;
  RuntimeOptions options_;
};

TEST_F(HorovodEnvironmentTest, DefaultsAreHorovods) {
  StatusOr<HorovodSettings> settings = Read();
  ASSERT_TRUE(settings.ok()) << settings.status().message();
  EXPECT_EQ(options_.timeout, std::chrono::seconds(30));
  EXPECT_TRUE(options_.negotiation.stall_check);
  EXPECT_EQ(options_.negotiation.stall_shutdown.count(), 0);
  EXPECT_EQ(settings->messages.level, LogLevel::kWarning);
  EXPECT_FALSE(settings->messages.time_stamps);
  EXPECT_FALSE(settings->start_timeout.has_value());
  EXPECT_TRUE(settings->notes.empty());
  EXPECT_EQ(options_.collective_thread_cpu, -1);
  EXPECT_TRUE(static_cast<bool>(options_.negotiation.warn));
}

TEST_F(HorovodEnvironmentTest, TimeoutsAndMessages) {
  values_ = {{env::kHorovodGlooTimeout, "45"},
             {env::kHorovodStartTimeout, "12"},
             {env::kHorovodLogLevel, "error"},
             {env::kHorovodLogHideTime, "0"}};
  StatusOr<HorovodSettings> settings = Read();
  ASSERT_TRUE(settings.ok()) << settings.status().message();
  EXPECT_EQ(options_.timeout, std::chrono::seconds(45));
  EXPECT_EQ(settings->start_timeout, std::chrono::seconds(12));
  EXPECT_EQ(settings->messages.level, LogLevel::kError);
  EXPECT_FALSE(settings->messages.Shows(LogLevel::kWarning));
  EXPECT_TRUE(settings->messages.time_stamps);
  values_ = {{env::kHorovodGlooTimeout, "bogus"}};
  EXPECT_EQ(ReadError(), "HOROVOD_GLOO_TIMEOUT_SECONDS='bogus' is not a whole number from 1 to 86400");
  values_ = {{env::kHorovodStartTimeout, "0"}};
  EXPECT_EQ(ReadError(), "HOROVOD_START_TIMEOUT='0' is not a whole number from 1 to 86400");
  values_ = {{env::kHorovodLogLevel, "bogus"}};
  EXPECT_EQ(ReadError(),
            "HOROVOD_LOG_LEVEL='bogus' is not a log level (TRACE, DEBUG, INFO, WARNING, ERROR, FATAL)");
  values_ = {{env::kHorovodLogHideTime, "bogus"}};
  EXPECT_EQ(ReadError(), "HOROVOD_LOG_HIDE_TIME='bogus' is not 1 or 0");
}

TEST_F(HorovodEnvironmentTest, TheStallCheckAsHorovodsInspector) {
  values_ = {{env::kHorovodStallShutdownTime, "120"}};
  ASSERT_TRUE(Read().ok());
  EXPECT_EQ(options_.negotiation.stall_shutdown, std::chrono::seconds(120));
  options_.negotiation.stall_shutdown = {};
  values_ = {{env::kHorovodStallShutdownTime, "30"}};
  EXPECT_EQ(Notes(),
            (std::vector<std::string>{"HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=30: below the stall warning time "
                                      "(60 s), so stalled collectives wait on, as in Horovod"}));
  EXPECT_EQ(options_.negotiation.stall_shutdown.count(), 0);
  values_ = {{env::kHorovodStallCheckDisable, "1"}, {env::kHorovodStallShutdownTime, "120"}};
  EXPECT_EQ(Notes(),
            (std::vector<std::string>{"HOROVOD_STALL_SHUTDOWN_TIME_SECONDS=120: the stall check is off "
                                      "(HOROVOD_STALL_CHECK_DISABLE=1), so stalled collectives wait on, as "
                                      "in Horovod"}));
  EXPECT_FALSE(options_.negotiation.stall_check);
  values_ = {{env::kHorovodStallCheckDisable, "yes"}};
  EXPECT_EQ(ReadError(), "HOROVOD_STALL_CHECK_DISABLE='yes' is not 1 or 0");
  values_ = {{env::kHorovodStallShutdownTime, "-5"}};
  EXPECT_EQ(ReadError(), "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS='-5' is not a whole number from 0 to 86400");
}

TEST_F(HorovodEnvironmentTest, TheCollectiveWatchdogsTime) {
  ASSERT_TRUE(Read().ok());
  EXPECT_EQ(options_.negotiation.watchdog.count(), 0);  // the stall check time
  values_ = {{env::kWatchdogTime, "5"}};
  ASSERT_TRUE(Read().ok());
  EXPECT_EQ(options_.negotiation.watchdog, std::chrono::seconds(5));
  values_ = {{env::kWatchdogTime, "soon"}};
  EXPECT_EQ(ReadError(), "HVDRUN_WATCHDOG_SECONDS='soon' is not a whole number from 0 to 86400");
}

TEST_F(HorovodEnvironmentTest, TheLibraryForHostMemory) {
  options_.backend = BackendKind::kMpi;
  values_ = {{env::kHorovodCpuOperations, "Gloo"}};
  ASSERT_TRUE(Read().ok());
  EXPECT_EQ(options_.backend, BackendKind::kGloo);
  options_.backend = BackendKind::kMpi;
  values_ = {{env::kHorovodController, "gloo"}, {env::kHorovodCpuOperations, "mpi"}};
  EXPECT_EQ(Notes(),
            (std::vector<std::string>{"HOROVOD_CONTROLLER=gloo: libhvdrun negotiates over the library that "
                                      "carries host memory, HOROVOD_CPU_OPERATIONS=mpi"}));
  EXPECT_EQ(options_.backend, BackendKind::kMpi);
  options_.backend = BackendKind::kGloo;
  values_ = {{env::kHorovodController, "mpi"}};
  EXPECT_EQ(ReadError(),
            "HOROVOD_CONTROLLER=mpi: MPI needs ranks that mpirun started, and hvdrun started this one for "
            "gloo; run "
            "hvdrun --mpi");
  options_.backend = BackendKind::kNccl;
  values_ = {{env::kHorovodCpuOperations, "gloo"}};
  ASSERT_TRUE(Read().ok());
  EXPECT_EQ(options_.backend, BackendKind::kNccl);  // a --nccl job's host runtime is Gloo's already
  values_ = {{env::kHorovodCpuOperations, "ccl"}};
  EXPECT_EQ(ReadError(), "HOROVOD_CPU_OPERATIONS=ccl: oneCCL is not a library libhvdrun has (gloo or mpi)");
  values_ = {{env::kHorovodController, "bogus"}};
  EXPECT_EQ(ReadError(), "HOROVOD_CONTROLLER='bogus' is not gloo or mpi");
}

TEST_F(HorovodEnvironmentTest, GlooListensOnTheInterfaceNamed) {
  values_ = {{env::kHorovodGlooIface, "lo"}, {env::kHostname, "localhost"}};
  ASSERT_TRUE(Read().ok());
  EXPECT_EQ(options_.host_address, "127.0.0.1");
  values_ = {{env::kHorovodGlooIface, "hvdrun-none0"}, {env::kHostname, "localhost"}};
  EXPECT_EQ(ReadError().rfind("HOROVOD_GLOO_IFACE=hvdrun-none0: host localhost: no network interface named "
                              "hvdrun-none0",
                              0),
            0u)
      << ReadError();
  values_ = {{env::kHorovodGlooIface, "a/b"}};
  EXPECT_EQ(ReadError(), "HOROVOD_GLOO_IFACE='a/b' is not an interface name");
  options_.backend = BackendKind::kMpi;
  values_ = {{env::kHorovodGlooIface, "lo"}};
  EXPECT_EQ(Notes(),
            (std::vector<std::string>{"HOROVOD_GLOO_IFACE=lo: this job's host memory goes over MPI, not "
                                      "Gloo; hvdrun --network-interface chooses MPI's interfaces"}));
}

TEST_F(HorovodEnvironmentTest, ThreadAffinityOneCorePerLocalRank) {
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int first = 0;
  while (!CPU_ISSET(first, &allowed)) ++first;
  values_ = {{env::kHorovodThreadAffinity, "9999," + std::to_string(first)}};
  ASSERT_TRUE(Read().ok()) << ReadError();
  EXPECT_EQ(options_.collective_thread_cpu, first);  // local rank 1's
  options_.collective_thread_cpu = -1;
  values_ = {{env::kHorovodThreadAffinity, "0"}};
  EXPECT_EQ(Notes(),
            (std::vector<std::string>{"HOROVOD_THREAD_AFFINITY=0: 1 core id(s) for 2 local ranks (one each "
                                      "is needed); no collective thread is pinned, as in Horovod"}));
  EXPECT_EQ(options_.collective_thread_cpu, -1);
  values_ = {{env::kHorovodThreadAffinity, "0,9999"}};
  EXPECT_EQ(ReadError(),
            "HOROVOD_THREAD_AFFINITY=0,9999: core 9999 (local rank 1's) is not one this rank may run on");
  values_ = {{env::kHorovodThreadAffinity, "0;1"}};
  EXPECT_EQ(ReadError(),
            "HOROVOD_THREAD_AFFINITY='0;1' is not core ids separated by commas, one per local rank (0,1)");
}

TEST_F(HorovodEnvironmentTest, WhatLibhvdrunDoesNotHaveIsNamed) {
  values_ = {{env::kHorovodHierarchicalAllgather, "1"},
             {env::kHorovodTorusAllreduce, "1"},
             {env::kHorovodMpiThreadsDisable, "1"},
             {env::kHorovodNumNcclStreams, "2"},
             {env::kHorovodHierarchicalAllreduce, "1"}};
  EXPECT_EQ(
      Notes(),
      (std::vector<std::string>{
          "HOROVOD_HIERARCHICAL_ALLGATHER=1: libhvdrun has no hierarchical allgather; allgathers run in one "
          "step over gloo",
          "HOROVOD_TORUS_ALLREDUCE=1: libhvdrun has no torus allreduce; allreduces run over gloo as they "
          "would",
          "HOROVOD_MPI_THREADS_DISABLE=1: applies to MPI, and this job's ranks use gloo",
          "HOROVOD_NUM_NCCL_STREAMS=2: applies to NCCL (hvdrun --nccl), and this job's ranks use gloo"}));
  options_.backend = BackendKind::kMpi;
  values_ = {{env::kHorovodMpiThreadsDisable, "0"}, {env::kHorovodHierarchicalAllreduce, "1"}};
  EXPECT_EQ(Notes(),
            (std::vector<std::string>{
                "HOROVOD_HIERARCHICAL_ALLREDUCE=1: libhvdrun's hierarchical allreduce runs over gloo only; "
                "this job's run over mpi",
                "HOROVOD_MPI_THREADS_DISABLE=0: libhvdrun initialises MPI at MPI_THREAD_SERIALIZED (it calls "
                "MPI from one thread at a time), never MPI_THREAD_MULTIPLE"}));
  values_ = {{env::kHorovodMpiThreadsDisable, "1"}, {env::kHorovodHierarchicalAllgather, "0"}};
  EXPECT_TRUE(Notes().empty());  // what libhvdrun does anyway
  options_.backend = BackendKind::kNccl;
  values_ = {{env::kHorovodNumNcclStreams, "1"}};
  EXPECT_TRUE(Notes().empty());
  values_ = {{env::kHorovodNumNcclStreams, "4"}};
  EXPECT_EQ(Notes(),
            (std::vector<std::string>{"HOROVOD_NUM_NCCL_STREAMS=4: libhvdrun's NCCL backend runs each "
                                      "runtime's collectives on one stream"}));
  values_ = {{env::kHorovodNumNcclStreams, "0"}};
  EXPECT_EQ(ReadError(), "HOROVOD_NUM_NCCL_STREAMS='0' is not a whole number from 1 to 64");
  values_ = {{env::kHorovodTorusAllreduce, "2"}};
  EXPECT_EQ(ReadError(), "HOROVOD_TORUS_ALLREDUCE='2' is not 1 or 0");
}

}  // namespace
}  // namespace hvdrun
