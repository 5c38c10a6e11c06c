#include "common/protocol/mpi_job_values.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/environment_reader.h"

namespace hvdrun {
namespace {

using Variables = std::map<std::string, std::string>;

// What mpirun's ranks see: the encoded variables, as their environment.
Variables AsEnvironment(const MpiJobVariables& encoded) {
  Variables variables;
  for (const auto& [name, value] : encoded) variables[name] = value;
  return variables;
}

const std::string kSecret(64, 'a');

JobEnvironment FullJob() {
  JobEnvironment job;
  job.job_id = "0123abcd";
  job.backend = "gloo";
  job.rendezvous_addr = "10.0.0.1";
  job.rendezvous_port = 4567;
  job.secret = kSecret;
  job.master_addr = "10.0.0.2";
  job.master_port = 29500;
  job.network_interfaces = {"eth0", "eth1"};
  job.timeline_dir = "/tmp/timeline";
  job.timeline_mark_cycles = true;
  return job;
}

Variables JobVariables() {
  return {{"HVDRUN_JOB_ID", "0123abcd"},
          {"HVDRUN_BACKEND", "mpi"},
          {"HVDRUN_RENDEZVOUS_ADDR", "127.0.0.1"},
          {"HVDRUN_RENDEZVOUS_PORT", "4567"},
          {"HVDRUN_SECRET", kSecret},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "29500"}};
}

TEST(MpiJobValues, WhatTheLauncherEncodesTheAgentDecodes) {
  const JobEnvironment job = FullJob();
  const Variables environment = AsEnvironment(EncodeMpiJobValues(job, "server1:2,server2:2"));
  StatusOr<std::string> layout = DecodeMpiLayout(LookupIn(environment));
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(layout.value(), "server1:2,server2:2");
  StatusOr<JobEnvironment> decoded = DecodeMpiJobEnvironment(LookupIn(environment));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->job_id, job.job_id);
  EXPECT_EQ(decoded->backend, job.backend);
  EXPECT_EQ(decoded->rendezvous_addr, job.rendezvous_addr);
  EXPECT_EQ(decoded->rendezvous_port, job.rendezvous_port);
  EXPECT_EQ(decoded->secret, job.secret);
  EXPECT_EQ(decoded->master_addr, job.master_addr);
  EXPECT_EQ(decoded->master_port, job.master_port);
  EXPECT_EQ(decoded->network_interfaces, job.network_interfaces);
  EXPECT_EQ(decoded->timeline_dir, job.timeline_dir);
  EXPECT_EQ(decoded->timeline_mark_cycles, job.timeline_mark_cycles);
  EXPECT_FALSE(decoded->slurm);
  EXPECT_TRUE(decoded->exports.empty());
}

TEST(MpiJobValues, AJobWithoutTimelineOrInterfacesRoundTripsToNone) {
  JobEnvironment job = FullJob();
  job.network_interfaces.clear();
  job.timeline_dir.clear();
  const MpiJobVariables encoded = EncodeMpiJobValues(job, "localhost:2");
  EXPECT_EQ(encoded.size(), 8u);
  StatusOr<JobEnvironment> decoded = DecodeMpiJobEnvironment(LookupIn(AsEnvironment(encoded)));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_TRUE(decoded->network_interfaces.empty());
  EXPECT_TRUE(decoded->timeline_dir.empty());
  EXPECT_FALSE(decoded->timeline_mark_cycles);
}

TEST(MpiJobValues, TheUsersExportsReplaceHvdrunsValueOrFollow) {
  JobEnvironment job = FullJob();
  job.exports = {"MASTER_PORT=1234", "OMP_NUM_THREADS=4", "EMPTY"};
  const MpiJobVariables encoded = EncodeMpiJobValues(job, "localhost:2");
  const Variables environment = AsEnvironment(encoded);
  EXPECT_EQ(environment.at("MASTER_PORT"), "1234");
  EXPECT_EQ(encoded[encoded.size() - 2], (std::pair<std::string, std::string>{"OMP_NUM_THREADS", "4"}));
  EXPECT_EQ(encoded.back(), (std::pair<std::string, std::string>{"EMPTY", ""}));
  StatusOr<JobEnvironment> decoded = DecodeMpiJobEnvironment(LookupIn(environment));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->master_port, 1234);
}

TEST(MpiJobValues, AnEmptyJobEncodesTheNamesAlone) {
  for (const auto& [name, value] : EncodeMpiJobValues(JobEnvironment{}, "")) {
    EXPECT_EQ(value, "") << name;
  }
}

TEST(MpiJobValues, TheAgentsOwnVariablesAreKnown) {
  for (const char* name :
       {"HVDRUN_SECRET", "HVDRUN_RENDEZVOUS_ADDR", "HVDRUN_RENDEZVOUS_PORT", "HVDRUN_MPI_LAYOUT"}) {
    EXPECT_TRUE(IsMpiAgentVariable(name)) << name;
  }
  for (const char* name : {"MASTER_PORT", "HVDRUN_JOB_ID", "OMP_NUM_THREADS", "HVDRUN_SECRETS"}) {
    EXPECT_FALSE(IsMpiAgentVariable(name)) << name;
  }
}

TEST(MpiJobValues, DecodesTheJobValuesHvdrunPassedThroughMpirun) {
  Variables variables = JobVariables();
  variables["SLURM_JOB_ID"] = "42";
  StatusOr<JobEnvironment> job = DecodeMpiJobEnvironment(LookupIn(variables));
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job.value().job_id, "0123abcd");
  EXPECT_EQ(job.value().backend, "mpi");
  EXPECT_EQ(job.value().rendezvous_addr, "127.0.0.1");
  EXPECT_EQ(job.value().rendezvous_port, 4567);
  EXPECT_EQ(job.value().secret, kSecret);
  EXPECT_EQ(job.value().master_addr, "127.0.0.1");
  EXPECT_EQ(job.value().master_port, 29500);
  EXPECT_TRUE(job.value().slurm);
  EXPECT_TRUE(job.value().exports.empty());
}

TEST(MpiJobValues, AMissingJobValueIsNamedAndTheSecretNeverShown) {
  for (const char* name : {"HVDRUN_JOB_ID", "HVDRUN_RENDEZVOUS_PORT", "HVDRUN_SECRET", "MASTER_PORT"}) {
    Variables variables = JobVariables();
    variables.erase(name);
    StatusOr<JobEnvironment> job = DecodeMpiJobEnvironment(LookupIn(variables));
    ASSERT_FALSE(job.ok()) << name;
    EXPECT_EQ(job.status().message().rfind(std::string(name) + " is not set", 0), 0u)
        << job.status().message();
  }
  Variables variables = JobVariables();
  variables["HVDRUN_SECRET"] = kSecret.substr(1);
  StatusOr<JobEnvironment> job = DecodeMpiJobEnvironment(LookupIn(variables));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message().find(kSecret.substr(1)), std::string::npos) << job.status().message();

  variables = JobVariables();
  variables["HVDRUN_RENDEZVOUS_PORT"] = "0";
  EXPECT_FALSE(DecodeMpiJobEnvironment(LookupIn(variables)).ok());
  variables = JobVariables();
  variables["HVDRUN_NETWORK_INTERFACES"] = "eth0,bad name";
  StatusOr<JobEnvironment> bad = DecodeMpiJobEnvironment(LookupIn(variables));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "HVDRUN_NETWORK_INTERFACES: 'bad name' is not an interface name");
  EXPECT_FALSE(DecodeMpiLayout(LookupIn(JobVariables())).ok());
}

}  // namespace
}  // namespace hvdrun
