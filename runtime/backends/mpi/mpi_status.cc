#include "runtime/backends/mpi/mpi_status.h"

#include <mpi.h>

#include <string>
#include <string_view>

#include "runtime/one_line.h"

namespace hvdrun {
namespace {

std::string ErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS || length <= 0) {
    return "MPI error code " + std::to_string(code);
  }
  return OneLine(std::string_view(text, static_cast<size_t>(length)));
}

}  // namespace

Status MpiStatus(std::string_view what, int code) {
  if (code == MPI_SUCCESS) return Status::Ok();
  return Status::Error("mpi: " + std::string(what) + " failed: " + ErrorText(code));
}

}  // namespace hvdrun
