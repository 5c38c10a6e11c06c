// hvdrun._C: libhvdrun's collectives for Python (python/hvdrun/torch/ builds Horovod's API on it): the
// module's table of names. Its parts: the process's runtimes, init and what the job is
// (python/module_runtimes.h); the collectives over buffer addresses and their handles
// (python/module_collectives.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/module_collectives.h"
#include "python/module_runtimes.h"

namespace py = pybind11;

// NOLINTNEXTLINE(readability-identifier-length,modernize-use-trailing-return-type)
PYBIND11_MODULE(_C, m) {
  namespace hp = hvdrun::python;
  m.doc() = "libhvdrun's collectives over buffer addresses; use hvdrun.torch";
  py::class_<hp::Handle>(m, "Handle")
      .def("wait", &hp::Handle::Wait, "Blocks until the collective has run; raises RuntimeError if it failed")
      .def("wait_on_stream", &hp::Handle::WaitOnStream, py::arg("stream"),
           "Returns once the collective is queued on the device, the CUDA stream `stream` (an int; 0: the "
           "default stream) made to wait for its end; elsewhere as wait(); raises RuntimeError if it failed")
      .def("ready", &hp::Handle::Ready, "Whether the collective has run");
  m.def("init", &hp::Init);
  m.def("shutdown", &hp::Shutdown);
  m.def("is_initialized", &hp::Initialized);
  m.def("rank", &hp::Rank);
  m.def("size", &hp::Size);
  m.def("local_rank", &hp::LocalRank);
  m.def("local_size", &hp::LocalSize);
  m.def("cross_rank", &hp::CrossRank);
  m.def("cross_size", &hp::CrossSize);
  m.def("round", &hp::Round);
  m.def("hosts_updated", &hp::HostsUpdated);
  m.def("error_kind", &hp::ErrorKindOf);
  m.def("backend", &hp::Backend);
  m.def("device_backend", &hp::DeviceBackend);
  m.def("job_backend", &hp::JobBackend);
  m.def("built_backends", &hp::BuiltBackends);
  m.def("nccl_version_code", &hp::NcclVersionCode);
  m.def("allreduce_async", &hp::AllreduceAsync, py::arg("name"), py::arg("send"), py::arg("recv"),
        py::arg("count"), py::arg("dtype"), py::arg("op"), py::arg("compression") = "",
        py::arg("stream") = py::none(), py::arg("process_set") = 0, py::arg("prescale") = 1.0,
        py::arg("postscale") = 1.0, py::arg("shape") = std::vector<int64_t>{});
  m.def("broadcast_async", &hp::BroadcastAsync, py::arg("name"), py::arg("buffer"), py::arg("count"),
        py::arg("dtype"), py::arg("root"), py::arg("stream") = py::none(), py::arg("process_set") = 0,
        py::arg("shape") = std::vector<int64_t>{});
  py::class_<hp::GatherHandle>(m, "GatherHandle")
      .def("wait", &hp::GatherHandle::Wait,
           "Blocks until the allgather has run; raises RuntimeError if it failed")
      .def("wait_on_stream", &hp::GatherHandle::WaitOnStream, py::arg("stream"),
           "The same as wait() (host memory); for groups of calls completed on a stream")
      .def("ready", &hp::GatherHandle::Ready, "Whether the allgather has run")
      .def("counts", &hp::GatherHandle::Counts, "Elements gathered from each rank, in rank order")
      .def("copy_to", &hp::GatherHandle::CopyTo, py::arg("address"),
           "Copies the gathered elements to `address`");
  m.def("allgather_async", &hp::AllgatherAsync, py::arg("name"), py::arg("send"), py::arg("count"),
        py::arg("dtype"), py::arg("row"), py::arg("process_set") = 0,
        py::arg("shape") = std::vector<int64_t>{});
  m.def("alltoall_async", &hp::AlltoallAsync, py::arg("name"), py::arg("send"), py::arg("splits"),
        py::arg("dtype"), py::arg("row"), py::arg("process_set") = 0,
        py::arg("shape") = std::vector<int64_t>{});
  m.def("allgather_into_async", &hp::AllgatherIntoAsync, py::arg("name"), py::arg("send"), py::arg("recv"),
        py::arg("count"), py::arg("dtype"), py::arg("stream") = py::none(), py::arg("process_set") = 0);
  m.def("alltoall_into_async", &hp::AlltoallIntoAsync, py::arg("name"), py::arg("send"), py::arg("recv"),
        py::arg("count"), py::arg("dtype"), py::arg("stream") = py::none(), py::arg("process_set") = 0);
  m.def("reducescatter_async", &hp::ReducescatterAsync, py::arg("name"), py::arg("send"), py::arg("recv"),
        py::arg("count"), py::arg("dtype"), py::arg("op"), py::arg("row"), py::arg("stream") = py::none(),
        py::arg("process_set") = 0, py::arg("prescale") = 1.0, py::arg("postscale") = 1.0,
        py::arg("shape") = std::vector<int64_t>{});
  m.def("barrier", &hp::Barrier, py::arg("process_set") = 0);
  m.def("start_timeline", &hp::StartTimeline, py::arg("path"), py::arg("mark_cycles") = false);
  m.def("stop_timeline", &hp::StopTimeline);
  m.def("mpi_threads_supported", &hp::MpiThreadsSupported);
  m.def("add_process_set", &hp::AddProcessSet, py::arg("ranks"),
        "Registers a process set of these job ranks on every runtime; returns its id");
  m.def("remove_process_set", &hp::RemoveProcessSet, py::arg("process_set"));
  m.def("process_set_rank", &hp::ProcessSetRank, py::arg("process_set"));
  m.def("process_set_size", &hp::ProcessSetSize, py::arg("process_set"));
  m.def("join", &hp::Join, "Blocks until every rank has joined; returns the rank that joined last");
}
