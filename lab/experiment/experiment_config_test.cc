#include "lab/experiment/experiment_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::lab {
namespace {

// Every error names the file, the line and the column (1-based) of what is wrong.
struct BadExperiment {
  const char* what;
  const char* text;
  const char* error;
};

const BadExperiment kBadExperiments[] = {
    {"unknown key", "program: p\nhots: localhost:2\n",
     "exp.yaml:2:1: unknown key 'hots' in the experiment (expected one of: name, description, hosts, "
     "hostfile, "
     "program, args, env, figures, defaults, matrix, exclude, repeats, timeout, gpus_per_server, hvdrun)"},
    {"axis --", "program: p\nmatrix:\n  \"--\": [1, 2]\n",
     "exp.yaml:3:3: axis '--' is not a program flag (expected -x or --name: a letter or digit, then letters, "
     "digits, '-', '_' or '.'; '--' ends a program's flags)"},
    {"axis -", "program: p\ndefaults:\n  \"-\": 1\n",
     "exp.yaml:3:3: axis '-' is not a program flag (expected -x or --name: a letter or digit, then letters, "
     "digits, '-', '_' or '.'; '--' ends a program's flags)"},
    {"axis with a space", "program: p\nmatrix:\n  \"--a b\": [1]\n",
     "exp.yaml:3:3: axis '--a b' is not a program flag (expected -x or --name: a letter or digit, then "
     "letters, digits, '-', '_' or '.'; '--' ends a program's flags)"},
    {"hvdrun not a map", "program: p\nhvdrun: [a]\n",
     "exp.yaml:2:9: hvdrun must be a map of hvdrun's options (ssh_user: ..., ...), not a list"},
    {"hvdrun unknown key", "program: p\nhvdrun:\n  ssh_usr: lab\n",
     "exp.yaml:3:3: unknown key 'ssh_usr' in hvdrun (expected one of: ssh_user, ssh_port, "
     "ssh_identity_file, ssh_known_hosts, ssh_accept_new_host_keys, agent_path, network_interface, "
     "start_timeout, heartbeat_timeout)"},
    {"hvdrun duplicate key", "program: p\nhvdrun:\n  ssh_port: 22\n  ssh_port: 23\n",
     "exp.yaml:4:3: duplicate key 'ssh_port' in hvdrun (first at line 3)"},
    {"hvdrun port", "program: p\nhvdrun: {ssh_port: 70000}\n",
     "exp.yaml:2:20: hvdrun.ssh_port: '70000' is not a whole number from 1 to 65535"},
    {"hvdrun timeout", "program: p\nhvdrun:\n  start_timeout: soon\n",
     "exp.yaml:3:18: hvdrun.start_timeout: 'soon' is not a whole number from 1 to 86400"},
    {"hvdrun switch", "program: p\nhvdrun:\n  ssh_accept_new_host_keys: yes please\n",
     "exp.yaml:3:29: hvdrun.ssh_accept_new_host_keys: 'yes please' is not true or false"},
    {"hvdrun empty interface list", "program: p\nhvdrun:\n  network_interface: []\n",
     "exp.yaml:3:22: hvdrun.network_interface: the list is empty"},
    {"hvdrun user a map", "program: p\nhvdrun:\n  ssh_user: {a: 1}\n",
     "exp.yaml:3:13: hvdrun.ssh_user must be a single value, not a map"},
    {"duplicate key", "program: p\nrepeats: 2\nrepeats: 3\n",
     "exp.yaml:3:1: duplicate key 'repeats' in the experiment (first at line 2)"},
    {"missing program", "repeats: 2\n",
     "exp.yaml:1:1: missing key 'program' (the command every cell runs, e.g. hvdrun-trainer)"},
    {"not a map", "- a\n- b\n",
     "exp.yaml:1:1: the experiment must be a map of keys (program, matrix, ...); see docs/lab.md"},
    {"YAML syntax", "program: p\nmatrix: {np: [1, 2\n",
     "exp.yaml:3:1: not valid YAML: end of sequence flow not found"},
    {"repeats not a number", "program: p\nrepeats: three\n",
     "exp.yaml:2:10: repeats: 'three' is not a whole number from 1 to 1000"},
    {"repeats a list", "program: p\nrepeats: [1, 2]\n",
     "exp.yaml:2:10: repeats must be a single value, not a list"},
    {"timeout not positive", "program: p\ntimeout: -5\n",
     "exp.yaml:2:10: timeout (seconds): '-5' is not a number above 0 and at most 604800"},
    {"program a map", "program: {a: 1}\n", "exp.yaml:1:10: program must be a single value, not a map"},
    {"args not a list", "program: p\nargs: --steps 20\n",
     "exp.yaml:2:7: args must be a list of arguments, as in [--steps, 20], not '--steps 20'"},
    {"env name", "program: p\nenv:\n  1BAD: x\n", "exp.yaml:3:3: env: '1BAD' is not a variable name"},
    {"figures key", "program: p\nfigures:\n  step: t\n",
     "exp.yaml:3:3: unknown key 'step' in figures (expected one of: step_time, step_time_scale, throughput, "
     "throughput_unit, accuracy, training_time)"},
    {"np not a number", "program: p\nmatrix:\n  np: [1, two, 4]\n",
     "exp.yaml:3:11: np: 'two' is not a whole number from 1 to 1048576"},
    {"np zero", "program: p\nmatrix:\n  np: [0]\n",
     "exp.yaml:3:8: np: '0' is not a whole number from 1 to 1048576"},
    {"unknown backend", "program: p\nmatrix:\n  backend: [gloo, nckl]\n",
     "exp.yaml:3:19: backend: unknown backend 'nckl' (expected gloo, mpi or nccl)"},
    {"unknown axis", "program: p\nmatrix:\n  modle: [resnet50]\n",
     "exp.yaml:3:3: unknown axis 'modle' (expected backend, np, processes_per_server, servers, model, "
     "batch_size, "
     "device, threads, compression, fusion, fusion_threshold, a program flag such as --image-size, or "
     "env.NAME)"},
    {"unknown fusion setting", "program: p\nmatrix:\n  fusion: [off, 'on', horovod-0.18]\n",
     "exp.yaml:3:23: fusion: unknown setting 'horovod-0.18' (expected off, on, horovod-0.19, horovod-0.20, "
     "autotune, or whole MiB/ms such as 64/5)"},
    {"fusion MiB not whole", "program: p\nmatrix:\n  fusion: [2.5/1]\n",
     "exp.yaml:3:12: fusion: unknown setting '2.5/1' (expected off, on, horovod-0.19, horovod-0.20, "
     "autotune, or whole MiB/ms such as 64/5)"},
    {"unknown compression", "program: p\nmatrix:\n  compression: [none, fp4]\n",
     "exp.yaml:3:23: compression: unknown setting 'fp4' (expected none, fp16, bf16, fp8-e4m3, fp8-e5m2, fp8 "
     "(= fp8-e4m3) or fp8-naive)"},
    {"empty axis", "program: p\nmatrix:\n  np: []\n", "exp.yaml:3:7: np: the list is empty"},
    {"value twice", "program: p\nmatrix:\n  model: [a, b, a]\n", "exp.yaml:3:17: model: 'a' is listed twice"},
    {"nested value", "program: p\nmatrix:\n  model: [[a]]\n",
     "exp.yaml:3:11: model: each value must be a single value, not a list"},
    {"default a list", "program: p\ndefaults:\n  model: [a, b]\n",
     "exp.yaml:3:10: model: each value must be a single value, not a list"},
    {"np and processes_per_server", "program: p\nmatrix:\n  np: [1]\n  processes_per_server: [2]\n",
     "exp.yaml:4:3: give np (processes in all) or processes_per_server, not both"},
    {"env axis name", "program: p\nmatrix:\n  env.A-B: [1]\n",
     "exp.yaml:3:3: 'env.A-B': 'A-B' is not a variable name"},
    {"exclude unknown axis", "program: p\nmatrix:\n  np: [1, 2]\nexclude:\n  - {model: a}\n",
     "exp.yaml:5:6: exclude: 'model' is not an axis of the matrix or defaults"},
    {"exclude unknown value", "program: p\nmatrix:\n  np: [1, 2]\nexclude:\n  - {np: 3}\n",
     "exp.yaml:5:10: exclude: '3' is not a value of np (1, 2)"},
    {"exclude not a list", "program: p\nexclude: {np: 1}\n",
     "exp.yaml:2:10: exclude must be a list of maps, as in [{backend: nccl, np: 1}]"},
    {"hosts spec", "program: p\nhosts: 'localhost:x'\n",
     "exp.yaml:2:8: hosts: host 1 'localhost:x': slots must be a whole number from 1 to 1048576, got 'x'"},
    {"hosts and hostfile", "program: p\nhosts: localhost:2\nhostfile: h.txt\n",
     "exp.yaml:3:1: give either hosts or hostfile, not both"},
    {"hostfile missing", "program: p\nhostfile: no-such-hosts.txt\n",
     "exp.yaml:2:11: hostfile: cannot read 'no-such-hosts.txt': No such file or directory"},
    {"bad name", "program: p\nname: 'my lab'\n",
     "exp.yaml:2:7: name 'my lab' names the results directory: use only letters, digits, '-', '_' and '.'"},
    {"gpus_per_server", "program: p\ngpus_per_server: -1\n",
     "exp.yaml:2:18: gpus_per_server: '-1' is not a whole number from 0 to 1024"},
    // Values every run would refuse are refused before any runs: hvdrun-trainer's --threads and
    // --batch-size, libhvdrun's HOROVOD_FUSION_THRESHOLD, hvdrun's --network-interface.
    {"threads 0", "program: p\nmatrix:\n  threads: [1, 0]\n",
     "exp.yaml:3:16: threads: '0' is not a whole number from 1 to 4096"},
    {"threads -1", "program: p\ndefaults:\n  threads: -1\n",
     "exp.yaml:3:12: threads: '-1' is not a whole number from 1 to 4096"},
    {"threads a switch", "program: p\nmatrix:\n  threads: [true]\n",
     "exp.yaml:3:13: threads: 'true' is not a whole number from 1 to 4096"},
    {"batch size 0", "program: p\nmatrix:\n  batch_size: [0]\n",
     "exp.yaml:3:16: batch_size: '0' is not a whole number from 1 to 1048576"},
    {"fusion threshold not a number", "program: p\nmatrix:\n  fusion_threshold: [x]\n",
     "exp.yaml:3:22: fusion_threshold: 'x' is not a whole number from 0 to 1099511627776"},
    {"fusion threshold 2^64", "program: p\nmatrix:\n  fusion_threshold: [18446744073709551616]\n",
     "exp.yaml:3:22: fusion_threshold: '18446744073709551616' is not a whole number from 0 to 1099511627776"},
    {"interface list ending in a comma", "program: p\nhvdrun:\n  network_interface: 'lo,'\n",
     "exp.yaml:3:22: hvdrun.network_interface: 'lo,': an empty interface name"},
    {"interface list with an empty name", "program: p\nhvdrun:\n  network_interface: [eth0, 'a,,b']\n",
     "exp.yaml:3:29: hvdrun.network_interface: 'a,,b': an empty interface name"},
    {"interface name too long", "program: p\nhvdrun:\n  network_interface: averyveryverylongname\n",
     "exp.yaml:3:22: hvdrun.network_interface: 'averyveryverylongname': 'averyveryverylongname' is not an "
     "interface name (1 to 15 characters, no '/', ':', ',' or spaces)"},
    // The file's own text is quoted without its control characters.
    {"carriage return in a key", "program: p\n\"hots\\r\": x\n",
     "exp.yaml:2:1: unknown key 'hots?' in the experiment (expected one of: name, description, hosts, "
     "hostfile, "
     "program, args, env, figures, defaults, matrix, exclude, repeats, timeout, gpus_per_server, hvdrun)"},
    // Found by the experiment fuzzer: bytes that are not UTF-8 once made `run` fail as it wrote
    // experiment.json; YAML is Unicode text.
    {"not UTF-8", "program: p\nname: caf\xe9\n",
     "exp.yaml:2:10: byte 0xe9 is not UTF-8 text; an experiment file is UTF-8 (YAML's encoding)"},
    {"a control character",
     "program: p\ndescription: a\x01"
     "b\n",
     "exp.yaml:2:15: byte 0x01 is a control character; YAML text holds none but tab and line ends"},
    {"a surrogate is not UTF-8", "program: p\ndescription: \xed\xa0\x80\n",
     "exp.yaml:2:14: byte 0xed is not UTF-8 text; an experiment file is UTF-8 (YAML's encoding)"},
    {"escape sequence in a value", "program: p\nmatrix:\n  backend: [\"\\e[2Jgloo\"]\n",
     "exp.yaml:3:13: backend: unknown backend '?[2Jgloo' (expected gloo, mpi or nccl)"},
};

class BadExperimentTest : public testing::TestWithParam<BadExperiment> {};

TEST_P(BadExperimentTest, ErrorNamesFileLineAndColumn) {
  StatusOr<ExperimentConfig> config = ParseExperiment(GetParam().text, "exp.yaml");
  ASSERT_FALSE(config.ok()) << GetParam().what;
  EXPECT_EQ(config.status().message(), GetParam().error) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(Table, BadExperimentTest, testing::ValuesIn(kBadExperiments));

// Found by the experiment fuzzer: yaml-cpp read "R%<NUL>Net" as "R%", one byte 0x85 and "et", which
// is not UTF-8, and the fuzzer's write of experiment.json threw.
TEST(ExperimentConfig, ANulByteIsAControlCharacterNotPartOfAValue) {
  const std::string text = std::string("program: p\ndescription: R%") + '\0' + "Net\n";
  StatusOr<ExperimentConfig> config = ParseExperiment(text, "exp.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "exp.yaml:2:16: byte 0x00 is a control character; YAML text holds none but tab and line ends");
}

TEST(ExperimentConfig, ParsesEveryKey) {
  StatusOr<ExperimentConfig> parsed = ParseExperiment(R"(
name: lab7
description: CPU scaling
hosts: [localhost:4, 127.0.0.1:4]
program: hvdrun-trainer
args: [--steps, 20]
env: {OMP_NUM_THREADS: 1}
figures: {step_time: time_us, step_time_scale: 1e-6, throughput: busbw_gbps, throughput_unit: GB/s}
defaults: {model: resnet50, batch_size: 32}
matrix:
  np: [1, 2, 4]
  backend: [gloo, mpi]
  --image-size: [224]
  --synthetic: [true]
  env.HVDRUN_X: [a]
exclude:
  - {backend: mpi, np: [1, 2]}
repeats: 3
timeout: 90.5
gpus_per_server: 0
)",
                                                      "dir/exp.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const ExperimentConfig& config = parsed.value();
  EXPECT_EQ(config.name, "lab7");
  EXPECT_EQ(config.description, "CPU scaling");
  ASSERT_EQ(config.hosts.size(), 2u);
  EXPECT_EQ(config.hosts[1].host, "127.0.0.1");
  EXPECT_EQ(config.hosts[1].slots, 4);
  EXPECT_EQ(config.program, "hvdrun-trainer");
  EXPECT_EQ(config.args, (std::vector<std::string>{"--steps", "20"}));
  ASSERT_EQ(config.env.size(), 1u);
  EXPECT_EQ(config.env[0].first, "OMP_NUM_THREADS");
  EXPECT_EQ(config.figures.step_time, "time_us");
  EXPECT_DOUBLE_EQ(config.figures.step_time_scale, 1e-6);
  EXPECT_EQ(config.figures.throughput, "busbw_gbps");
  EXPECT_EQ(config.figures.accuracy, "test_accuracy");  // the default
  EXPECT_EQ(config.repeats, 3);
  EXPECT_DOUBLE_EQ(config.timeout_s, 90.5);
  EXPECT_EQ(config.gpus_per_server, 0);
  // backend, np, servers first; then the others in the order of the file (defaults before matrix).
  std::vector<std::string> names;
  for (const Axis& axis : config.axes) names.push_back(axis.name);
  EXPECT_EQ(names, (std::vector<std::string>{"backend", "np", "servers", "model", "batch_size",
                                             "--image-size", "--synthetic", "env.HVDRUN_X"}));
  EXPECT_EQ(config.axes[0].values.size(), 2u);
  EXPECT_TRUE(config.axes[0].from_matrix);
  EXPECT_EQ(config.axes[2].values[0].text, "1");  // servers: hvdrun-lab's default
  EXPECT_FALSE(config.axes[2].from_matrix);
  EXPECT_EQ(config.axes[3].target, "--model");
  EXPECT_EQ(config.axes[4].target, "--batch-size");
  EXPECT_TRUE(config.axes[6].values[0].is_boolean);
  EXPECT_EQ(config.axes[7].kind, AxisKind::kEnvironment);
  EXPECT_EQ(config.axes[7].target, "HVDRUN_X");
  ASSERT_EQ(config.excludes.size(), 1u);
  EXPECT_EQ(config.excludes[0].conditions[1].second, (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(config.excludes[0].position.Prefix(), "dir/exp.yaml:17:5: ");
}

TEST(ExperimentConfig, DefaultsNameTheResultsAfterTheFile) {
  StatusOr<ExperimentConfig> config = ParseExperiment("program: p\n", "configs/lab7-cpu-scaling.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->name, "lab7-cpu-scaling");
  EXPECT_EQ(config->repeats, 1);
  ASSERT_EQ(config->axes.size(), 3u);
  EXPECT_EQ(config->axes[0].values[0].text, "gloo");
  EXPECT_TRUE(config->hosts.empty());
}

TEST(ExperimentConfig, QuotedTrueIsTextNotABoolean) {
  StatusOr<ExperimentConfig> config =
      ParseExperiment("program: p\nmatrix: {--flag: ['true', true]}\n", "e.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_FALSE(config->axes[3].values[0].is_boolean);
  EXPECT_TRUE(config->axes[3].values[1].is_boolean);
}

TEST(ExperimentConfig, HostfileIsReadRelativeToTheExperiment) {
  e2e::ScratchDir dir;
  dir.WriteFile("hosts.txt", "server1 slots=4\nserver2 slots=2\n");
  std::string path = dir.WriteFile("exp.yaml", "program: p\nhostfile: hosts.txt\n");
  StatusOr<ExperimentConfig> config = LoadExperiment(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_EQ(config->hosts.size(), 2u);
  EXPECT_EQ(config->hosts[0].host, "server1");
  EXPECT_EQ(config->hosts[1].slots, 2);

  dir.WriteFile("bad-hosts.txt", "server1 slots=x\n");
  path = dir.WriteFile("bad.yaml", "program: p\nhostfile: bad-hosts.txt\n");
  config = LoadExperiment(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            path + ":2:11: hostfile: " + dir.path() +
                "/bad-hosts.txt:1: slots must be a whole number from 1 to 1048576, got 'x'");
}

TEST(ExperimentConfig, HvdrunSectionBecomesHvdrunFlagsInItsOwnOrder) {
  const char* home = std::getenv("HOME");
  StatusOr<ExperimentConfig> config = ParseExperiment(R"(program: p
hvdrun:
  heartbeat_timeout: 20
  network_interface: [data0, eth1]
  ssh_known_hosts: keys/known_hosts
  ssh_identity_file: /keys/id_ed25519
  ssh_accept_new_host_keys: true
  agent_path: /opt/hvdrun/bin/hvdrun-agent
  ssh_user: lab
  ssh_port: 2222
  start_timeout: 45
)",
                                                      "/labs/exp.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(HvdrunOptionArguments(config.value()),
            (std::vector<std::string>{
                "--ssh-user", "lab", "--ssh-port", "2222", "--ssh-identity-file", "/keys/id_ed25519",
                "--ssh-known-hosts", "/labs/keys/known_hosts", "--ssh-accept-new-host-keys", "--agent-path",
                "/opt/hvdrun/bin/hvdrun-agent", "--network-interface", "data0", "--network-interface", "eth1",
                "--start-timeout", "45", "--heartbeat-timeout", "20"}));
  ASSERT_EQ(config->hvdrun_options.size(), 9u);
  EXPECT_EQ(config->hvdrun_options[0].key, "ssh_user");
  EXPECT_EQ(config->hvdrun_options[0].position.Prefix(), "/labs/exp.yaml:9:13: ");

  // false leaves the switch out; "~/" is the user's home; a single interface needs no list.
  config = ParseExperiment(
      "program: p\nhvdrun: {ssh_accept_new_host_keys: false, ssh_identity_file: ~/.ssh/lab, "
      "network_interface: eth0}\n",
      "exp.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_NE(home, nullptr);
  EXPECT_EQ(HvdrunOptionArguments(config.value()),
            (std::vector<std::string>{"--ssh-identity-file",
                                      (std::filesystem::path(home) / ".ssh/lab").lexically_normal().string(),
                                      "--network-interface", "eth0"}));
}

TEST(ExperimentConfig, ThreadsIsAnAxisOfTheProgramsThreadsFlag) {
  StatusOr<ExperimentConfig> config = ParseExperiment("program: p\nmatrix: {threads: [1, 2]}\n", "e.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  const Axis* threads = FindAxis(config.value(), "threads");
  ASSERT_NE(threads, nullptr);
  EXPECT_EQ(threads->target, "--threads");
  EXPECT_EQ(threads->values.size(), 2u);
}

// yaml-cpp's own parser recurses, and gives up at 500 levels as "bad file"; hvdrun-lab stops far
// sooner, saying where and why.
TEST(ExperimentConfig, NestingIsBoundedAndNamed) {
  for (size_t depth : {33, 600, 200000}) {
    std::string text =
        "program: p\nmatrix:\n  model: " + std::string(depth, '[') + std::string(depth, ']') + "\n";
    StatusOr<ExperimentConfig> config = ParseExperiment(text, "exp.yaml");
    ASSERT_FALSE(config.ok()) << depth;
    EXPECT_EQ(config.status().message(),
              "exp.yaml:3:40: maps and lists nested deeper than 32 levels, the most hvdrun-lab reads")
        << depth;
  }
  std::string block = "program: p\nargs:\n";
  for (int level = 0; level < 40; ++level) block += std::string(2 * level + 2, ' ') + "- \n";
  StatusOr<ExperimentConfig> config = ParseExperiment(block, "exp.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("nested deeper than 32 levels"), std::string::npos)
      << config.status().message();
  // 31 levels are read (and refused for what they are).
  config = ParseExperiment(
      "program: p\nmatrix:\n  model: " + std::string(30, '[') + std::string(30, ']') + "\n", "exp.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(), "exp.yaml:3:11: model: each value must be a single value, not a list");
}

TEST(ExperimentConfig, SizeIsBounded) {
  const std::string text = "program: p\ndescription: '" + std::string(size_t{1} << 20, 'x') + "'\n";
  StatusOr<ExperimentConfig> config = ParseExperiment(text, "exp.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "exp.yaml: the experiment is 1048603 bytes long, more than the 1048576 hvdrun-lab reads");
  e2e::ScratchDir dir;
  const std::string path = dir.WriteFile("big.yaml", text);
  config = LoadExperiment(path);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "cannot read experiment '" + path +
                "': it is larger than 1048576 bytes, the most hvdrun-lab reads of it");
}

// `run` reads the file once: the text it keeps as experiment.yaml is the text it parsed.
TEST(ExperimentConfig, KeepsTheTextItParsed) {
  e2e::ScratchDir dir;
  const std::string text = "program: p  # the program\nmatrix: {np: [1, 2]}\n";
  StatusOr<ExperimentConfig> config = LoadExperiment(dir.WriteFile("exp.yaml", text));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->text, text);
  config = LoadExperiment(dir.path());
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(), "cannot read experiment '" + dir.path() + "': Is a directory");
}

TEST(ExperimentConfig, UnreadableFile) {
  StatusOr<ExperimentConfig> config = LoadExperiment("/no/such/experiment.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "cannot read experiment '/no/such/experiment.yaml': No such file or directory");
}

}  // namespace
}  // namespace hvdrun::lab
