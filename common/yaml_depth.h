// LoadYamlWithin: yaml-cpp's YAML::Load, after a first pass over the text that builds nothing and
// stops where maps and lists nest deeper than a limit, so that neither yaml-cpp's recursive parser
// nor the document built from it goes deeper (a file nested thousands deep fails in the reader's own
// words, naming the line, instead of yaml-cpp's "bad file" or a stack overflow). Header-only: its
// users (hvdrun --config-file, hvdrun-lab's experiment files) link yaml-cpp; common/ itself does not.
#ifndef HVDRUN_COMMON_YAML_DEPTH_H_
#define HVDRUN_COMMON_YAML_DEPTH_H_

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>

namespace hvdrun {

// Thrown by LoadYamlWithin: where the first map or list deeper than the limit opens.
struct YamlTooDeep {
  YAML::Mark mark;
};

namespace yaml_depth_internal {

class DepthCheck : public YAML::EventHandler {
 public:
  explicit DepthCheck(int max_depth) : max_depth_(max_depth) {}
  void OnDocumentStart(const YAML::Mark& /*mark*/) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnAlias(const YAML::Mark& /*mark*/, YAML::anchor_t /*anchor*/) override {}
  void OnScalar(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {}
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    Enter(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    Enter(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  void Enter(const YAML::Mark& mark) {
    if (++depth_ > max_depth_) throw YamlTooDeep{mark};
  }

  const int max_depth_;
  int depth_ = 0;
};

}  // namespace yaml_depth_internal

// The document of `text`, whose maps and lists nest at most `max_depth` deep. Throws YamlTooDeep
// past that, and YAML::Exception where yaml-cpp finds the text is not YAML.
inline YAML::Node LoadYamlWithin(const std::string& text, int max_depth) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  yaml_depth_internal::DepthCheck depth(max_depth);
  parser.HandleNextDocument(depth);
  return YAML::Load(text);
}

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_YAML_DEPTH_H_
