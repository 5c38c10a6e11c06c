#include "examples/trainer/mnist_dataset.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include <string>

#include "examples/trainer/idx_test_files.h"
#include "tests/e2e/scratch_dir.h"

namespace hvdrun::trainer {
namespace {

using e2e::ScratchDir;

TEST(MnistDatasetTest, LoadsNormalizesAndLimits) {
  ScratchDir dir;
  ASSERT_TRUE(testing::WriteMnistDataset(dir.path(), 12, 5, 4, 4, 10));
  StatusOr<MnistDataset> dataset = LoadMnistDataset(dir.path(), 0, 0);
  ASSERT_TRUE(dataset.ok()) << dataset.status().message();
  EXPECT_EQ(dataset->image_rows, 4);
  EXPECT_EQ(dataset->image_columns, 4);
  EXPECT_EQ(dataset->train.images.sizes().vec(), (std::vector<int64_t>{12, 1, 4, 4}));
  EXPECT_EQ(dataset->test.images.sizes().vec(), (std::vector<int64_t>{5, 1, 4, 4}));
  EXPECT_EQ(dataset->train.labels.scalar_type(), at::kLong);
  EXPECT_EQ(dataset->train.labels[11].item<int64_t>(), 11 % 10);
  EXPECT_EQ(dataset->max_label, 9);
  // Normalized with the training set's own statistics.
  EXPECT_NEAR(dataset->train.images.mean().item<double>(), 0.0, 1e-5);
  EXPECT_NEAR(dataset->train.images.std().item<double>(), 1.0, 1e-5);
  // Pixel order is kept: pixel p of example i was (i * 7 + p) % 256.
  at::Tensor first = dataset->train.images[0].flatten();
  EXPECT_LT(first[0].item<float>(), first[1].item<float>());

  StatusOr<MnistDataset> limited = LoadMnistDataset(dir.path(), 7, 2);
  ASSERT_TRUE(limited.ok()) << limited.status().message();
  EXPECT_EQ(limited->train.size(), 7);
  EXPECT_EQ(limited->test.size(), 2);
  EXPECT_TRUE(limited->train.labels.equal(dataset->train.labels.slice(0, 0, 7)));
}

TEST(MnistDatasetTest, AMissingDataSetNamesTheFileAndTheDebianPackage) {
  ScratchDir dir;
  StatusOr<MnistDataset> dataset = LoadMnistDataset(dir.path() + "/nothing", 0, 0);
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().message(),
            "--data-dir: no train-images-idx3-ubyte.gz (or train-images-idx3-ubyte) in '" + dir.path() +
                "/nothing': install the Debian package dataset-fashion-mnist, or give --data-dir a directory "
                "holding "
                "an MNIST-format data set");
}

TEST(MnistDatasetTest, MismatchedFilesAreErrors) {
  ScratchDir dir;
  ASSERT_TRUE(testing::WriteMnistDataset(dir.path(), 6, 3, 4, 4, 10));
  ASSERT_TRUE(
      testing::WriteGzipFile(dir.path() + "/t10k-labels-idx1-ubyte.gz", testing::IdxBytes({2}, {1, 2})));
  StatusOr<MnistDataset> dataset = LoadMnistDataset(dir.path(), 0, 0);
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().message(), "--data-dir '" + dir.path() + "': t10k has 3 images but 2 labels");

  ASSERT_TRUE(testing::WriteGzipFile(dir.path() + "/t10k-labels-idx1-ubyte.gz",
                                     testing::IdxBytes({3, 1}, {1, 2, 3})));
  dataset = LoadMnistDataset(dir.path(), 0, 0);
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().message(),
            "'" + dir.path() + "/t10k-labels-idx1-ubyte.gz': 2 dimensions, expected 1 (labels)");
}

TEST(MnistDatasetTest, ShardsAreDisjointAndEqualWhenAsked) {
  MnistSplit split{at::arange(10, at::kFloat).reshape({10, 1, 1, 1}), at::arange(10, at::kLong)};
  MnistSplit rank1 = ShardSplit(split, 1, 3, /*equal_shares=*/true);
  EXPECT_TRUE(rank1.labels.equal(at::tensor({1, 4, 7}, at::kLong)));
  EXPECT_TRUE(rank1.images.flatten().equal(at::tensor({1.F, 4.F, 7.F})));
  EXPECT_EQ(ShardSplit(split, 0, 3, true).size(), 3);  // example 9 is left out
  EXPECT_TRUE(ShardSplit(split, 0, 3, false).labels.equal(at::tensor({0, 3, 6, 9}, at::kLong)));
  EXPECT_EQ(ShardSplit(split, 2, 3, false).size(), 3);
  EXPECT_EQ(ShardSplit(split, 0, 1, true).size(), 10);
  MnistSplit two{at::zeros({2, 1, 1, 1}), at::arange(2, at::kLong)};
  EXPECT_EQ(ShardSplit(two, 2, 3, false).size(), 0);
}

}  // namespace
}  // namespace hvdrun::trainer
