#include "examples/trainer/trainer_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hvdrun::trainer {
namespace {

ParsedTrainerCommandLine Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "hvdrun-trainer");
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return ParseTrainerCommandLine(static_cast<int>(argv.size()), argv.data());
}

std::string Error(const std::vector<std::string>& args) {
  ParsedTrainerCommandLine parsed = Parse(args);
  EXPECT_FALSE(parsed.options.has_value());
  EXPECT_EQ(parsed.exit_code, kUsageExitCode);
  return parsed.error;
}

TEST(TrainerOptionsTest, SyntheticDefaultsFollowHorovodsBenchmark) {
  ParsedTrainerCommandLine parsed = Parse({"--model", "resnet50"});
  ASSERT_TRUE(parsed.options) << parsed.error;
  const TrainerOptions& o = *parsed.options;
  EXPECT_EQ(o.model->name, "resnet50");
  EXPECT_TRUE(o.synthetic);
  EXPECT_EQ(o.batch_size, 32);
  EXPECT_EQ(o.image_size, 224);
  EXPECT_EQ(o.steps, 20);
  EXPECT_EQ(o.warmup_steps, 5);
  EXPECT_DOUBLE_EQ(o.lr, 0.01);
  EXPECT_TRUE(o.scale_lr);
  EXPECT_EQ(o.threads, 0);
  EXPECT_FALSE(o.cuda);
}

TEST(TrainerOptionsTest, TheIssuesCommandLines) {
  ParsedTrainerCommandLine resnet =
      Parse({"--model", "resnet50", "--batch-size", "32", "--image-size", "224", "--steps", "20"});
  ASSERT_TRUE(resnet.options) << resnet.error;
  EXPECT_EQ(resnet.options->steps, 20);

  ParsedTrainerCommandLine fmnist = Parse({"--model", "fmnist-cnn", "--epochs", "3"});
  ASSERT_TRUE(fmnist.options) << fmnist.error;
  EXPECT_FALSE(fmnist.options->synthetic);
  EXPECT_EQ(fmnist.options->epochs, 3);
  EXPECT_EQ(fmnist.options->data_dir, "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(fmnist.options->image_size, 0) << "known once the data set is read";

  ParsedTrainerCommandLine describe = Parse({"--model", "vgg16", "--describe"});
  ASSERT_TRUE(describe.options) << describe.error;
  EXPECT_TRUE(describe.options->describe);
  EXPECT_EQ(describe.options->image_size, 224);
}

TEST(TrainerOptionsTest, EveryFlagIsRead) {
  ParsedTrainerCommandLine parsed = Parse({"--model=fmnist-cnn",
                                           "--epochs",
                                           "2",
                                           "--data-dir",
                                           "/data",
                                           "--train-limit",
                                           "100",
                                           "--test-limit",
                                           "50",
                                           "--lr",
                                           "0.5",
                                           "--momentum",
                                           "0",
                                           "--no-lr-scaling",
                                           "--threads",
                                           "3",
                                           "--device",
                                           "cuda",
                                           "--seed",
                                           "7",
                                           "--batch-size",
                                           "16",
                                           "--json",
                                           "out.json"});
  ASSERT_TRUE(parsed.options) << parsed.error;
  const TrainerOptions& o = *parsed.options;
  EXPECT_EQ(o.data_dir, "/data");
  EXPECT_EQ(o.train_limit, 100);
  EXPECT_EQ(o.test_limit, 50);
  EXPECT_DOUBLE_EQ(o.lr, 0.5);
  EXPECT_DOUBLE_EQ(o.momentum, 0);
  EXPECT_FALSE(o.scale_lr);
  EXPECT_EQ(o.threads, 3);
  EXPECT_TRUE(o.cuda);
  EXPECT_EQ(o.seed, 7U);
  EXPECT_EQ(o.batch_size, 16);
  EXPECT_EQ(o.json_path, "out.json");

  ParsedTrainerCommandLine synthetic = Parse(
      {"--model", "fmnist-cnn", "--synthetic", "--steps", "3", "--warmup-steps", "0", "--image-size", "8"});
  ASSERT_TRUE(synthetic.options) << synthetic.error;
  EXPECT_TRUE(synthetic.options->synthetic);
  EXPECT_EQ(synthetic.options->warmup_steps, 0);
  EXPECT_EQ(synthetic.options->image_size, 8);
}

TEST(TrainerOptionsTest, BadInputIsOneLineNamingTheFlag) {
  EXPECT_EQ(Error({}), "--model: give the model to train (resnet18, resnet50, vgg16, fmnist-cnn)");
  EXPECT_EQ(Error({"--model", "resnet51"}),
            "--model: unknown model 'resnet51' (known: resnet18, resnet50, vgg16, fmnist-cnn)");
  EXPECT_EQ(Error({"--model", "resnet50", "--batch-size", "0"}),
            "--batch-size: 0 is out of range (1 to 1048576)");
  EXPECT_EQ(Error({"--model", "resnet50", "--batch-size", "-4"}),
            "--batch-size: -4 is out of range (1 to 1048576)");
  EXPECT_EQ(Error({"--model", "resnet50", "--batch-size", "lots"}),
            "--batch-size: 'lots' is not a whole number");
  EXPECT_EQ(Error({"--model", "resnet50", "--image-size", "0"}),
            "--image-size: 0 is out of range (1 to 8192)");
  EXPECT_EQ(Error({"--model", "resnet50", "--image-size", "16"}),
            "--image-size: 16 is too small for resnet50 (at least 32)");
  EXPECT_EQ(Error({"--model", "vgg16", "--describe", "--image-size", "31"}),
            "--image-size: 31 is too small for vgg16 (at least 32)");
  EXPECT_EQ(Error({"--model", "resnet18", "--steps", "0"}), "--steps: 0 is out of range (1 to 1073741824)");
  EXPECT_EQ(Error({"--model", "fmnist-cnn", "--epochs", "0"}),
            "--epochs: 0 is out of range (1 to 1073741824)");
  EXPECT_EQ(Error({"--model", "fmnist-cnn", "--train-limit", "0"}),
            "--train-limit: 0 is out of range (1 to 1099511627776)");
  EXPECT_EQ(Error({"--model", "resnet18", "--threads", "0"}), "--threads: 0 is out of range (1 to 4096)");
  EXPECT_EQ(Error({"--model", "resnet18", "--lr", "0"}), "--lr: 0 is out of range (above 0, below 1e+06)");
  EXPECT_EQ(Error({"--model", "resnet18", "--lr", "nan"}), "--lr: 'nan' is not a number");
  EXPECT_EQ(Error({"--model", "resnet18", "--momentum", "1"}),
            "--momentum: 1 is out of range (at least 0, below 1)");
  EXPECT_EQ(Error({"--model", "resnet18", "--device", "tpu"}),
            "--device: unknown device 'tpu' (cpu or cuda)");
  EXPECT_EQ(Error({"--model", "resnet18", "--json", ""}), "--json: empty file name");
  EXPECT_EQ(Error({"--model", "fmnist-cnn", "--compression", "int8"}),
            "--compression: 'int8' is not a compression (none, fp16, bf16, fp8, fp8-e4m3, fp8-e5m2)");
  EXPECT_EQ(Error({"--model", "fmnist-cnn", "--error-feedback", "yes"}),
            "--error-feedback: 'yes' is not on or off");
}

TEST(TrainerOptionsTest, CompressionAndItsSafeguards) {
  ParsedTrainerCommandLine plain = Parse({"--model", "fmnist-cnn"});
  ASSERT_TRUE(plain.options.has_value()) << plain.error;
  EXPECT_FALSE(plain.options->compression.has_value()) << "hvdrun's, unless given";
  EXPECT_FALSE(plain.options->error_feedback.has_value());
  ParsedTrainerCommandLine naive =
      Parse({"--model", "fmnist-cnn", "--compression", "fp8", "--fp8-scaling", "off", "--fp8-safe-cast",
             "off", "--fp8-float32-sums", "off", "--error-feedback", "on"});
  ASSERT_TRUE(naive.options.has_value()) << naive.error;
  EXPECT_EQ(naive.options->compression, CompressionFormat::kFloat8E4M3);
  EXPECT_EQ(naive.options->fp8_scaling, false);
  EXPECT_EQ(naive.options->fp8_safe_cast, false);
  EXPECT_EQ(naive.options->fp8_float32_sums, false);
  EXPECT_EQ(naive.options->error_feedback, true);
}

TEST(TrainerOptionsTest, FlagsOfTheOtherKindOfRunAreRefused) {
  EXPECT_EQ(
      Error({"--model", "resnet50", "--epochs", "3"}),
      "--epochs: only for training on a data set (fmnist-cnn without --synthetic); this run is synthetic");
  EXPECT_EQ(
      Error({"--model", "vgg16", "--data-dir", "/tmp"}),
      "--data-dir: only for training on a data set (fmnist-cnn without --synthetic); this run is synthetic");
  EXPECT_EQ(
      Error({"--model", "fmnist-cnn", "--steps", "3"}),
      "--steps: only for synthetic runs (--synthetic); this run trains on /usr/share/datasets/fashion-mnist");
  EXPECT_EQ(Error({"--model", "fmnist-cnn", "--image-size", "28"}),
            "--image-size: only for synthetic runs; on a data set the images are the data set's");
}

TEST(TrainerOptionsTest, ElasticTrainsOnADataSetOnTheCpu) {
  ParsedTrainerCommandLine plain = Parse({"--model", "fmnist-cnn"});
  ASSERT_TRUE(plain.options) << plain.error;
  EXPECT_FALSE(plain.options->elastic);
  ParsedTrainerCommandLine parsed = Parse({"--model", "fmnist-cnn", "--elastic"});
  ASSERT_TRUE(parsed.options) << parsed.error;
  EXPECT_TRUE(parsed.options->elastic);
  EXPECT_EQ(parsed.options->commit_every, 10);
  parsed = Parse({"--model", "fmnist-cnn", "--elastic", "--commit-every", "3"});
  ASSERT_TRUE(parsed.options) << parsed.error;
  EXPECT_EQ(parsed.options->commit_every, 3);
  EXPECT_EQ(Error({"--model", "fmnist-cnn", "--commit-every", "3"}), "--commit-every: only with --elastic");
  EXPECT_EQ(
      Error({"--model", "resnet18", "--elastic"}),
      "--elastic: only for training on a data set (fmnist-cnn without --synthetic); this run is synthetic");
  EXPECT_EQ(Error({"--model", "fmnist-cnn", "--elastic", "--device", "cuda"}),
            "--elastic: trains on the CPU; use --device cpu");
  EXPECT_NE(Error({"--model", "fmnist-cnn", "--elastic", "--commit-every", "0"}).find("--commit-every: 0"),
            std::string::npos);
}

TEST(TrainerOptionsTest, UnknownFlagsAndHelp) {
  std::string error = Error({"--model", "resnet50", "--bogus"});
  EXPECT_NE(error.find("--bogus"), std::string::npos) << error;
  EXPECT_NE(error.find("(see hvdrun-trainer --help)"), std::string::npos) << error;

  ParsedTrainerCommandLine help = Parse({"--help"});
  EXPECT_FALSE(help.options);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(help.error.empty());
  for (const char* text : {"--model", "--describe", "--threads", "--no-lr-scaling", "resnet50", "fmnist-cnn",
                           "without hvdrun", "single process without the\nruntime"}) {
    EXPECT_NE(help.help.find(text), std::string::npos) << text << "\n" << help.help;
  }
}

}  // namespace
}  // namespace hvdrun::trainer
