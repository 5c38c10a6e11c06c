#include "examples/trainer/mnist_dataset.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/from_blob.h>
#include <sys/stat.h>

#include <algorithm>

#include "examples/trainer/idx_reader.h"

namespace hvdrun::trainer {
namespace {

bool IsFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// `dir`/`name`.gz, else `dir`/`name`; an error naming both when neither exists.
StatusOr<std::string> FindIdxFile(const std::string& dir, const std::string& name) {
  std::string gz = dir + "/" + name + ".gz";
  if (IsFile(gz)) return gz;
  std::string plain = dir + "/" + name;
  if (IsFile(plain)) return plain;
  return Status::Error("--data-dir: no " + name + ".gz (or " + name + ") in '" + dir +
                       "': install the Debian package dataset-fashion-mnist, or give --data-dir a directory "
                       "holding an MNIST-format data set");
}

struct RawSplit {
  IdxArray images;
  IdxArray labels;
};

StatusOr<RawSplit> ReadSplit(const std::string& dir, const std::string& prefix, int64_t limit) {
  RawSplit split;
  for (bool images : {true, false}) {
    std::string name = prefix + (images ? "-images-idx3-ubyte" : "-labels-idx1-ubyte");
    StatusOr<std::string> path = FindIdxFile(dir, name);
    if (!path.ok()) return path.status();
    StatusOr<IdxArray> array = ReadIdxFile(path.value());
    if (!array.ok()) return array.status();
    size_t want_dims = images ? 3 : 1;
    if (array->dims.size() != want_dims) {
      return Status::Error("'" + path.value() + "': " + std::to_string(array->dims.size()) +
                           " dimensions, expected " + std::to_string(want_dims) +
                           (images ? " (images, rows, columns)" : " (labels)"));
    }
    (images ? split.images : split.labels) = std::move(array).value();
  }
  if (split.images.dims[0] != split.labels.dims[0]) {
    return Status::Error("--data-dir '" + dir + "': " + prefix + " has " +
                         std::to_string(split.images.dims[0]) + " images but " +
                         std::to_string(split.labels.dims[0]) + " labels");
  }
  if (limit > 0 && limit < split.labels.dims[0]) {
    int64_t per_image = split.images.dims[1] * split.images.dims[2];
    split.images.dims[0] = limit;
    split.labels.dims[0] = limit;
    split.images.values.resize(static_cast<size_t>(limit * per_image));
    split.labels.values.resize(static_cast<size_t>(limit));
  }
  return split;
}

// Copies of the bytes: bytes in [0, 255] as float32 in [0, 1], [N, 1, rows, columns].
at::Tensor ImagesToTensor(IdxArray& images) {
  at::Tensor bytes =
      at::from_blob(images.values.data(), {images.dims[0], 1, images.dims[1], images.dims[2]}, at::kByte);
  return bytes.to(at::kFloat).div_(255.0);
}

at::Tensor LabelsToTensor(IdxArray& labels) {
  at::Tensor bytes = at::from_blob(labels.values.data(), {labels.dims[0]}, at::kByte);
  return bytes.to(at::kLong);
}

}  // namespace

StatusOr<MnistDataset> LoadMnistDataset(const std::string& dir, int64_t train_limit, int64_t test_limit) {
  StatusOr<RawSplit> train = ReadSplit(dir, "train", train_limit);
  if (!train.ok()) return train.status();
  StatusOr<RawSplit> test = ReadSplit(dir, "t10k", test_limit);
  if (!test.ok()) return test.status();
  if (train->images.dims[1] != test->images.dims[1] || train->images.dims[2] != test->images.dims[2]) {
    return Status::Error("--data-dir '" + dir + "': training images are " +
                         std::to_string(train->images.dims[1]) + "x" + std::to_string(train->images.dims[2]) +
                         " but test images " + std::to_string(test->images.dims[1]) + "x" +
                         std::to_string(test->images.dims[2]));
  }
  if (train->labels.dims[0] == 0 || test->labels.dims[0] == 0) {
    return Status::Error("--data-dir '" + dir + "': the training or the test set is empty");
  }
  MnistDataset dataset;
  dataset.image_rows = train->images.dims[1];
  dataset.image_columns = train->images.dims[2];
  dataset.train.images = ImagesToTensor(train->images);
  dataset.test.images = ImagesToTensor(test->images);
  // Normalized with the training set's statistics, as torchvision's MNIST examples do.
  const double mean = dataset.train.images.mean().item<double>();
  const double deviation = std::max(dataset.train.images.std().item<double>(), 1e-6);
  dataset.train.images.sub_(mean).div_(deviation);
  dataset.test.images.sub_(mean).div_(deviation);
  dataset.train.labels = LabelsToTensor(train->labels);
  dataset.test.labels = LabelsToTensor(test->labels);
  dataset.max_label =
      std::max(dataset.train.labels.max().item<int64_t>(), dataset.test.labels.max().item<int64_t>());
  return dataset;
}

MnistSplit ShardSplit(const MnistSplit& split, int rank, int ranks, bool equal_shares) {
  const int64_t n = split.size();
  const int64_t count = equal_shares ? n / ranks : (n - rank + ranks - 1) / ranks;
  at::Tensor indices = at::arange(rank, rank + count * ranks, ranks, at::kLong).slice(0, 0, count);
  return {split.images.index_select(0, indices), split.labels.index_select(0, indices)};
}

}  // namespace hvdrun::trainer
