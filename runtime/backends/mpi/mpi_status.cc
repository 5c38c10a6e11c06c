#include "runtime/backends/mpi/mpi_status.h"

#include <mpi.h>

#include <string>

namespace hvdrun {
namespace {

std::string ErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS || length <= 0) {
    return "MPI error code " + std::to_string(code);
  }
  std::string line(text, static_cast<size_t>(length));
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace

Status MpiStatus(std::string_view what, int code) {
  if (code == MPI_SUCCESS) return Status::Ok();
  return Status::Error("mpi: " + std::string(what) + " failed: " + ErrorText(code));
}

}  // namespace hvdrun
