#include "runtime/backends/mpi/mpi_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "common/exit_codes.h"
#include "runtime/backends/mpi/mpi_status.h"
#include "runtime/reduction_kernels.h"

namespace hvdrun {
namespace {

constexpr size_t kMaxCount = std::numeric_limits<int>::max();

// Open MPI's allreduce of a buffer much larger than a core's L2 cache, in one call, runs at under half
// the bus bandwidth it reaches at 4 to 8 MiB (2 ranks over shared memory: 7.7 GB/s at 4 MiB, 2.9 GB/s
// at 64 MiB; docs/benchmarks.md). The runtime's allreduce therefore goes in segments of this size,
// each a call of its own, as Gloo's and NCCL's own algorithms segment large buffers; the baseline
// (the library's single call) does not.
constexpr size_t kAllreduceSegmentBytes = size_t{4} << 20;

// The error for a call of more elements than MPI's int counts can hold.
Status CheckCount(std::string_view what, size_t count) {
  if (count <= kMaxCount) return Status::Ok();
  return Status::Error("mpi: " + std::string(what) + " of " + std::to_string(count) +
                       " elements exceeds MPI's limit of " + std::to_string(kMaxCount) +
                       " elements per call; split it");
}

}  // namespace

namespace {

// A duplicate of MPI_COMM_WORLD, or for a process set (context.members) a communicator of its members,
// made by MPI_Comm_create_group: a collective of the members only, tagged with the set's id.
StatusOr<MPI_Comm> GroupCommunicator(const BackendContext& context) {
  MPI_Comm comm = MPI_COMM_NULL;
  if (context.members.empty()) {
    Status status = MpiStatus("duplicating MPI_COMM_WORLD", MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (!status.ok()) return status;
    return comm;
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    return Status::Error(
        "mpi: process sets run their collectives concurrently and need MPI_THREAD_MULTIPLE, which this "
        "MPI does not provide: use an MPI built with thread support, or gloo");
  }
  MPI_Group world = MPI_GROUP_NULL;
  MPI_Group members = MPI_GROUP_NULL;
  Status status = MpiStatus("MPI_Comm_group", MPI_Comm_group(MPI_COMM_WORLD, &world));
  if (status.ok()) {
    status = MpiStatus("MPI_Group_incl", MPI_Group_incl(world, static_cast<int>(context.members.size()),
                                                        context.members.data(), &members));
  }
  if (status.ok()) {
    status = MpiStatus("MPI_Comm_create_group",
                       MPI_Comm_create_group(MPI_COMM_WORLD, members, context.group_id, &comm));
  }
  if (members != MPI_GROUP_NULL) MPI_Group_free(&members);
  if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
  if (!status.ok()) return status;
  return comm;
}

}  // namespace

StatusOr<std::unique_ptr<Backend>> MpiBackend::Create(const BackendContext& context) {
  Status initialized = MpiLibraryHold::EnsureInitialized();
  if (!initialized.ok()) return initialized;
  int world_rank = -1;
  int world_size = 0;
  Status status = MpiStatus("MPI_Comm_rank", MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  if (status.ok()) status = MpiStatus("MPI_Comm_size", MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  if (!status.ok()) return status;
  const bool group = !context.members.empty();
  const int job_rank = group ? context.members[static_cast<size_t>(context.rank)] : context.rank;
  const int job_size = group ? world_size : context.size;
  if (world_rank != job_rank || world_size != job_size) {
    return Status::Error("mpi: this process is rank " + std::to_string(world_rank) + " of " +
                         std::to_string(world_size) + " in MPI_COMM_WORLD, but hvdrun gave it rank " +
                         std::to_string(job_rank) + " of " + std::to_string(job_size) +
                         " (HVDRUN_RANK, HVDRUN_SIZE): the ranks were not started by `hvdrun --mpi`; "
                         "start the job with hvdrun --mpi");
  }

  StatusOr<MPI_Comm> made = GroupCommunicator(context);
  if (!made.ok()) return made.status();
  MPI_Comm comm = made.value();
  status =
      MpiStatus("setting the communicator's error handler", MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  StatusOr<std::unique_ptr<MpiTypeMap>> types =
      status.ok() ? MpiTypeMap::Create() : StatusOr<std::unique_ptr<MpiTypeMap>>(status);
  if (!types.ok()) {
    MPI_Comm_free(&comm);
    return types.status();
  }
  return std::unique_ptr<Backend>(new MpiBackend(comm, std::move(types).value(), context.rank, context.size));
}

MpiBackend::MpiBackend(MPI_Comm comm, std::unique_ptr<MpiTypeMap> types, int rank, int size)
    : comm_(comm), types_(std::move(types)), rank_(rank), size_(size) {}

MpiBackend::~MpiBackend() {
  // If the program finalised MPI itself before destroying the Runtime, nothing can be freed.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0 || abandoned_) return;
  types_.reset();
  MPI_Comm_free(&comm_);
}

void MpiBackend::Abandon() {
  abandoned_ = true;
  hold_.Abandon();
}

bool MpiBackend::RequestAbort() {
  std::fprintf(
      stderr,
      "libhvdrun: rank %d: an MPI collective waited past the stall shutdown time "
      "(HOROVOD_STALL_SHUTDOWN_TIME_SECONDS) and cannot be ended alone: ending the job (MPI_Abort)\n",
      rank_);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, kExitStall);
  return true;
}

Status MpiBackend::Allreduce(const void* send, void* recv, size_t count, DataType type, ReduceOp op) {
  if (count == 0) return Status::Ok();
  // In segments: one call per kAllreduceSegmentBytes (which also lifts MPI's int limit on counts).
  const size_t element = DataTypeSize(type);
  const size_t segment = kAllreduceSegmentBytes / element;
  for (size_t first = 0; first < count; first += segment) {
    const size_t n = std::min(segment, count - first);
    void* out = static_cast<char*>(recv) + first * element;
    const void* source = send == recv ? MPI_IN_PLACE : static_cast<const char*>(send) + first * element;
    Status status = MpiStatus(
        "allreduce",
        MPI_Allreduce(source, out, static_cast<int>(n), types_->Datatype(type), types_->Op(type, op), comm_));
    if (!status.ok()) return status;
    if (op == ReduceOp::kAverage) DivideBy(type, out, n, size_);
  }
  return Status::Ok();
}

Status MpiBackend::Broadcast(void* buffer, size_t count, DataType type, int root) {
  if (count == 0) return Status::Ok();
  if (Status status = CheckCount("broadcast", count); !status.ok()) return status;
  return MpiStatus("broadcast",
                   MPI_Bcast(buffer, static_cast<int>(count), types_->Datatype(type), root, comm_));
}

Status MpiBackend::Allgather(const void* send, void* recv, size_t count, DataType type) {
  if (count == 0) return Status::Ok();
  if (Status status = CheckCount("allgather", count); !status.ok()) return status;
  const size_t bytes = count * DataTypeSize(type);
  char* own_block = static_cast<char*>(recv) + static_cast<size_t>(rank_) * bytes;
  // MPI forbids a send buffer that aliases the receive buffer except as MPI_IN_PLACE (this rank's
  // block already in place), so a send buffer elsewhere inside recv is moved there first.
  const void* source = send;
  if (send == own_block) {
    source = MPI_IN_PLACE;
  } else if (BuffersOverlap(send, bytes, recv, bytes * static_cast<size_t>(size_))) {
    std::memmove(own_block, send, bytes);
    source = MPI_IN_PLACE;
  }
  const MPI_Datatype datatype = types_->Datatype(type);
  return MpiStatus("allgather", MPI_Allgather(source, static_cast<int>(count), datatype, recv,
                                              static_cast<int>(count), datatype, comm_));
}

Status MpiBackend::Alltoall(const void* send, void* recv, size_t count, DataType type) {
  if (count == 0) return Status::Ok();
  if (Status status = CheckCount("alltoall", count); !status.ok()) return status;
  const size_t bytes = count * DataTypeSize(type) * static_cast<size_t>(size_);
  if (BuffersOverlap(send, bytes, recv, bytes)) {
    return Status::Error("mpi: alltoall: the send and receive buffers overlap on rank " +
                         std::to_string(rank_));
  }
  const MPI_Datatype datatype = types_->Datatype(type);
  return MpiStatus("alltoall", MPI_Alltoall(send, static_cast<int>(count), datatype, recv,
                                            static_cast<int>(count), datatype, comm_));
}

Status MpiBackend::Alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                             const std::vector<size_t>& recv_counts, DataType type) {
  if (Status counts = CheckAlltoallvCounts("mpi", send_counts, recv_counts, size_, rank_); !counts.ok()) {
    return counts;
  }
  const auto ranks = static_cast<size_t>(size_);
  // MPI counts and displacements are ints, in elements.
  std::vector<int> counts_out(ranks);
  std::vector<int> counts_in(ranks);
  std::vector<int> at_out(ranks);
  std::vector<int> at_in(ranks);
  size_t send_total = 0;
  size_t recv_total = 0;
  for (size_t j = 0; j < ranks; ++j) {
    for (size_t value : {send_counts[j], recv_counts[j], send_total, recv_total}) {
      if (Status status = CheckCount("alltoallv", value); !status.ok()) return status;
    }
    counts_out[j] = static_cast<int>(send_counts[j]);
    counts_in[j] = static_cast<int>(recv_counts[j]);
    at_out[j] = static_cast<int>(send_total);
    at_in[j] = static_cast<int>(recv_total);
    send_total += send_counts[j];
    recv_total += recv_counts[j];
  }
  for (size_t total : {send_total, recv_total}) {
    if (Status status = CheckCount("alltoallv", total); !status.ok()) return status;
  }
  const size_t element = DataTypeSize(type);
  if (BuffersOverlap(send, send_total * element, recv, recv_total * element)) {
    return Status::Error("mpi: alltoallv: the send and receive buffers overlap on rank " +
                         std::to_string(rank_));
  }
  const MPI_Datatype datatype = types_->Datatype(type);
  return MpiStatus("alltoallv", MPI_Alltoallv(send, counts_out.data(), at_out.data(), datatype, recv,
                                              counts_in.data(), at_in.data(), datatype, comm_));
}

Status MpiBackend::Reducescatter(const void* send, void* recv, const std::vector<size_t>& counts, int rank,
                                 DataType type, ReduceOp op) {
  std::vector<int> recv_counts;
  size_t total = 0;
  for (size_t count : counts) {
    if (Status status = CheckCount("reducescatter", count); !status.ok()) return status;
    recv_counts.push_back(static_cast<int>(count));
    total += count;
  }
  if (total == 0) return Status::Ok();
  const size_t own = counts[static_cast<size_t>(rank)];
  if (BuffersOverlap(send, total * DataTypeSize(type), recv, own * DataTypeSize(type))) {
    return Status::Error("mpi: reducescatter: the send and receive buffers overlap on rank " +
                         std::to_string(rank_));
  }
  // Parts of one size (Horovod's split of rows that divide evenly) go through MPI_Reduce_scatter_block,
  // for which Open MPI picks faster algorithms than for MPI_Reduce_scatter's counts (0.78x of it at
  // 64 MiB on 2 ranks: docs/benchmarks.md).
  const bool even = std::all_of(counts.begin(), counts.end(), [own](size_t count) { return count == own; });
  Status status = even ? MpiStatus("reducescatter", MPI_Reduce_scatter_block(
                                                        send, recv, static_cast<int>(own),
                                                        types_->Datatype(type), types_->Op(type, op), comm_))
                       : MpiStatus("reducescatter",
                                   MPI_Reduce_scatter(send, recv, recv_counts.data(), types_->Datatype(type),
                                                      types_->Op(type, op), comm_));
  if (status.ok() && op == ReduceOp::kAverage) DivideBy(type, recv, own, size_);
  return status;
}

Status MpiBackend::Barrier() { return MpiStatus("barrier", MPI_Barrier(comm_)); }

std::optional<bool> MpiBackend::mpi_threads_multiple() const {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided == MPI_THREAD_MULTIPLE;
}

Status MpiBackend::BaselineAllreduce(void* buffer, size_t count, DataType type, ReduceOp op) {
  if (op != ReduceOp::kSum || (type != DataType::kFloat32 && type != DataType::kFloat64)) {
    return Status::Error("mpi: the baseline allreduce supports float32 and float64 with sum, not " +
                         std::string(DataTypeName(type)) + " with " + std::string(ReduceOpName(op)));
  }
  if (count == 0) return Status::Ok();
  if (Status status = CheckCount("baseline allreduce", count); !status.ok()) return status;
  return MpiStatus("baseline allreduce",
                   MPI_Allreduce(MPI_IN_PLACE, buffer, static_cast<int>(count),
                                 type == DataType::kFloat32 ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM, comm_));
}

}  // namespace hvdrun
