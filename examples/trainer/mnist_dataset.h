// An MNIST-format data set (MNIST, Fashion-MNIST, KMNIST, ...) in one directory: the four IDX files
// train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte, each gzip-compressed (".gz", as Debian's dataset-fashion-mnist ships
// them) or plain. Images become float32 tensors normalized with the training set's mean and
// standard deviation; labels int64 tensors.
#ifndef HVDRUN_EXAMPLES_TRAINER_MNIST_DATASET_H_
#define HVDRUN_EXAMPLES_TRAINER_MNIST_DATASET_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "hvdrun/status.h"

namespace hvdrun::trainer {

// Where Debian's dataset-fashion-mnist installs Fashion-MNIST; --data-dir's default.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct MnistSplit {
  at::Tensor images;  // [N, 1, rows, columns], float32, normalized
  at::Tensor labels;  // [N], int64
  int64_t size() const { return labels.defined() ? labels.size(0) : 0; }
};

struct MnistDataset {
  MnistSplit train;
  MnistSplit test;
  int64_t image_rows = 0;
  int64_t image_columns = 0;
  int64_t max_label = 0;  // the largest label in either split
};

// Loads the data set in `dir`, keeping the first `train_limit` training and `test_limit` test
// examples (0: all). A missing file is an error that names the file and the Debian package
// (dataset-fashion-mnist); a malformed one names the file and the fault (idx_reader.h); images
// and labels that do not match in count, or images that are not [N, rows, columns], are errors.
StatusOr<MnistDataset> LoadMnistDataset(const std::string& dir, int64_t train_limit, int64_t test_limit);

// Rank `rank`'s share of `split` among `ranks`: examples rank, rank + ranks, rank + 2·ranks, ...
// With `equal_shares`, every rank gets the same count, floor(N / ranks) (the last N mod ranks
// examples are left out), so that every rank runs the same number of steps; without, every example
// goes to some rank.
MnistSplit ShardSplit(const MnistSplit& split, int rank, int ranks, bool equal_shares);

}  // namespace hvdrun::trainer

#endif  // HVDRUN_EXAMPLES_TRAINER_MNIST_DATASET_H_
