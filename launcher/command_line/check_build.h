// hvdrun -cb (--check-build): horovodrun's table of what the installation has, in horovodrun's
// words and layout, so that a script that reads it ("[X] PyTorch") reads hvdrun's too.
//
// What hvdrun finds: PyTorch is checked when `python3 -c "import hvdrun.torch"` succeeds (the
// python3 and PYTHONPATH of hvdrun's environment, as horovodrun imports horovod.torch); TensorFlow
// and MXNet never are (hvdrun has no binding for them). A controller, and its tensor operations, is
// checked when libhvdrun's module for it is installed beside this hvdrun
// (<libdir>/hvdrun/backends/libhvdrun-<name>.so, runtime/backend_module_loader.h); NCCL's operations
// the same way; DDL and CCL never are.
#ifndef HVDRUN_LAUNCHER_COMMAND_LINE_CHECK_BUILD_H_
#define HVDRUN_LAUNCHER_COMMAND_LINE_CHECK_BUILD_H_

#include <string>

namespace hvdrun {

struct BuildFacts {
  bool torch = false;
  bool gloo = false;
  bool mpi = false;
  bool nccl = false;
  std::string modules_dir;  // where the backend modules were looked for
};

// The facts of the hvdrun whose program is at `hvdrun_path`.
BuildFacts FindBuildFacts(const std::string& hvdrun_path);

// The table, as horovodrun --check-build prints it.
std::string FormatCheckBuild(const BuildFacts& facts);

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_COMMAND_LINE_CHECK_BUILD_H_
