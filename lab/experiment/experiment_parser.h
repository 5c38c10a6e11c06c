// ExperimentParser: an hvdrun-lab experiment file (YAML, docs/lab.md) read into an ExperimentConfig
// (lab/experiment/experiment_config.h, whose ParseExperiment is its only user), one section per
// file: experiment_parser.cc (the top level and what every section uses), experiment_hosts.cc
// (hosts, hostfile), experiment_program.cc (args, env, figures, the hvdrun options) and
// experiment_axes.cc (matrix, defaults, exclude). Errors name the file, line and column. Not
// thread-safe; one parser reads one file.
#ifndef HVDRUN_LAB_EXPERIMENT_EXPERIMENT_PARSER_H_
#define HVDRUN_LAB_EXPERIMENT_EXPERIMENT_PARSER_H_

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hvdrun/status.h"
#include "lab/experiment/experiment_config.h"
#include "lab/experiment/experiment_limits.h"

namespace hvdrun::lab::experiment_file {

// The keys of an experiment file's top level, and of its figures section.
const std::vector<std::string>& TopLevelKeys();

const std::vector<std::string>& FigureKeys();

// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);

// hvdrun's host parsers name their flag ("-H: ..."); here the key names the place instead.
std::string WithoutFlag(const Status& status, const std::string& flag);

// An environment variable's name; a YAML boolean written plainly (true, False ...); a finite number.
bool IsVariableName(std::string_view name);

bool IsPlainBoolean(const YAML::Node& node);

std::optional<double> ParseNumber(const std::string& text);

// The well-known axes other than backend, np and servers, what they set, and the range of whole
// numbers their values must be in when what reads them takes whole numbers only (whole_max 0: any
// text), so that `validate` refuses a value every run would fail on.
struct NamedAxis {
  const char* name;
  AxisKind kind;
  const char* target;
  int64_t whole_min = 0;
  int64_t whole_max = 0;
};

inline constexpr NamedAxis kNamedAxes[] = {
    {"model", AxisKind::kProgramFlag, "--model"},
    {"batch_size", AxisKind::kProgramFlag, "--batch-size", 1, kMaxBatchSize},
    {"compression", AxisKind::kCompression, ""},
    {"device", AxisKind::kProgramFlag, "--device"},
    {"threads", AxisKind::kProgramFlag, "--threads", 1, kMaxThreads},
    {"fusion_threshold", AxisKind::kEnvironment, "HOROVOD_FUSION_THRESHOLD", 0, kMaxFusionThresholdBytes},
    {"fusion", AxisKind::kFusion, ""},
};

// A map's entries by key: (key node, value node).
using KeyNodes = std::map<std::string, std::pair<YAML::Node, YAML::Node>>;

class ExperimentParser {
 public:
  explicit ExperimentParser(const std::string& path) : path_(path) {}

  StatusOr<ExperimentConfig> Parse(std::string_view text);

 private:
  // The text's first YAML document, within the limits of lab/experiment/experiment_limits.h.
  StatusOr<YAML::Node> LoadYaml(std::string_view text) const;
  SourcePosition At(const YAML::Mark& mark) const;
  SourcePosition Where(const YAML::Node& node) const;
  std::string Relative(const std::string& path) const;
  // Every key of `map` must be in `allowed` and appear once; `what` names the map in errors.
  Status CollectKeys(const YAML::Node& map, const std::string& what, const std::vector<std::string>& allowed,
                     std::map<std::string, std::pair<YAML::Node, YAML::Node>>& keys) const;
  // Keys of a map in file order, checked to be unique scalars.
  StatusOr<std::vector<std::pair<YAML::Node, YAML::Node>>> OrderedEntries(const YAML::Node& map,
                                                                          const std::string& what) const;
  StatusOr<std::string> ScalarText(const YAML::Node& node, const std::string& what) const;
  static std::string Describe(const YAML::Node& node);
  StatusOr<int64_t> WholeNumber(const YAML::Node& node, const std::string& what, int64_t min,
                                int64_t max) const;
  StatusOr<double> PositiveNumber(const YAML::Node& node, const std::string& what, double max) const;
  Status CheckDirectoryName(const std::string& name, const SourcePosition& position) const;
  Status ParseHosts(const std::map<std::string, std::pair<YAML::Node, YAML::Node>>& keys);
  Status ParseArgs(const YAML::Node& node);
  Status ParseEnv(const YAML::Node& node);
  Status ParseFigures(const YAML::Node& node);
  // "~/x" under $HOME; a relative path under the experiment file's directory; made absolute, since
  // hvdrun runs in each run's own directory.
  std::string AbsolutePath(const std::string& path) const;
  Status ParseHvdrunOptions(const YAML::Node& node);
  // A value of the hvdrun section's key `option`, checked as hvdrun checks it, in hvdrun's words.
  StatusOr<std::string> HvdrunOptionValue(const HvdrunOptionKey& option, const YAML::Node& entry) const;
  // Names the axis `name` (as written at `key`) or says why it is not one.
  StatusOr<Axis> NewAxis(const YAML::Node& key) const;
  StatusOr<AxisValue> NewValue(const Axis& axis, const YAML::Node& node) const;
  // Adds the axis `key` with its `values` (a list in `matrix`) to `axes`, in place of one of the same
  // name (from `defaults`).
  Status AddAxis(const YAML::Node& key, const YAML::Node& values, bool from_matrix,
                 std::vector<Axis>& axes) const;
  // `defaults` (one value per axis) and `matrix` (a value or a list per axis); matrix wins.
  Status ParseAxes(const std::map<std::string, std::pair<YAML::Node, YAML::Node>>& keys);
  Status ParseExcludes(const YAML::Node& node);

  std::string path_;
  ExperimentConfig config_;
};

}  // namespace hvdrun::lab::experiment_file

#endif  // HVDRUN_LAB_EXPERIMENT_EXPERIMENT_PARSER_H_
