// RuntimeOptions: what a Runtime is initialized with (Runtime::Init), and what InitFromEnvironment
// reads from an hvdrun rank's environment (docs/environment.md), with its parts: the collective
// order, negotiation and fusion, the timeline, compression.
//
// Plain values: Init copies them into the Runtime and checks them, failing with a one-line Status
// that names the field that is wrong; changing them afterwards changes nothing. Every default is
// documented where its field is declared, with its reason. Settings that every rank must choose
// alike are the job's: ranks that differ in them fail, or wait until the runtime's timeout. Not
// thread-safe, as any struct: fill one per Runtime.
#ifndef HVDRUN_OPTIONS_H_
#define HVDRUN_OPTIONS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "hvdrun/key_value_store.h"
#include "hvdrun/types.h"

namespace hvdrun {

// How the ranks agree on which collective runs next. Every rank must choose the same.
enum class CollectiveOrder : uint8_t {
  kCallOrder = 0,   // in the order of the calls, the same on every rank; named calls are refused
  kNegotiated = 1,  // named collectives, negotiated and fused (NegotiationOptions)
};

// Named negotiation, the response cache and tensor fusion (CollectiveOrder::kNegotiated). Every rank
// must use the same settings. InitFromEnvironment reads them from Horovod's variables.
struct NegotiationOptions {
  // Ready allreduces of one element type and operation are packed into one buffer of at most this
  // many bytes (rounded up to a multiple of local_size * 512 B) and reduced by one call; 0 turns
  // fusion off. Horovod's HOROVOD_FUSION_THRESHOLD, with its current default.
  size_t fusion_threshold_bytes = size_t{128} << 20;
  // How often ranks agree on what is ready (HOROVOD_CYCLE_TIME).
  std::chrono::microseconds cycle_time{1000};
  // Negotiated requests remembered, so that later cycles agree on them with one small allreduce
  // and no gather (HOROVOD_CACHE_CAPACITY); 0 turns the cache off.
  size_t cache_capacity = 1024;
  // A name some ranks submitted and others not for this long gets a warning naming it and the
  // missing ranks, repeated each time it waits that much longer (Horovod: 60 s).
  std::chrono::milliseconds stall_warning{60000};
  // Horovod's stall check on (HOROVOD_STALL_CHECK_DISABLE=1: off, with neither warning nor shutdown).
  bool stall_check = true;
  // A name still waiting this long fails, and breaks the runtime (Horovod's
  // HOROVOD_STALL_SHUTDOWN_TIME_SECONDS); 0, Horovod's default: it waits on. In either collective
  // order it is also the one limit of a backend call's wait for a live rank (BackendContext::
  // collective_limit), with the stall check on.
  std::chrono::milliseconds stall_shutdown{0};
  // How long a call may stay in the backend before the collective watchdog logs it, naming it
  // (HVDRUN_WATCHDOG_SECONDS); 0: stall_warning. Off with the stall check.
  std::chrono::milliseconds watchdog{0};
  // Where warnings go, one line each; by default standard error (rank 0 warns for the job).
  std::function<void(const std::string&)> warn;
};

// Autotuning (Horovod's HOROVOD_AUTOTUNE*, hvdrun --autotune; docs/autotune.md): while the job runs,
// rank 0 measures bytes reduced per second of step under one setting of the fusion threshold (0-64
// MiB) and the cycle time (1-100 ms) after another, chosen by a Bayesian search, and every rank
// switches to each in the same cycle; after max_samples scored samples every rank keeps the best
// one measured, the starting setting included. The negotiated collective order only (the call-order
// path has neither a cycle nor a fusion threshold). Off by default, and then it costs nothing.
struct AutotuneOptions {
  bool enabled = false;
  // Rank 0 writes each sample there as CSV (Horovod's columns and hvdrun's); empty: no file.
  std::string log_file;
  // Samples measured and discarded first, while the job warms up (Horovod's 3).
  int warmup_samples = 3;
  // Steps per sample (Horovod's 10): a step ends where a tensor name comes round again.
  int steps_per_sample = 10;
  // Settings scored before the best is kept, the starting one included (Horovod's 20).
  int max_samples = 20;
  // The scores' noise relative to their spread, for the Gaussian process (Horovod's 0.8).
  double gaussian_process_noise = 0.8;
  // Set explicitly by the user (HOROVOD_FUSION_THRESHOLD, HOROVOD_CYCLE_TIME, HOROVOD_CACHE_CAPACITY,
  // HOROVOD_HIERARCHICAL_ALLREDUCE): kept as they are. Otherwise, after the search, the hierarchical
  // allreduce (where the job runs it) is tried off against on, then the response cache.
  bool fusion_threshold_fixed = false;
  bool cycle_time_fixed = false;
  bool cache_capacity_fixed = false;
  bool hierarchical_allreduce_fixed = false;
};

// A Chrome-trace timeline of what this rank's runtime does, for chrome://tracing and Perfetto
// (docs/timeline.md). hvdrun --timeline-filename gives every rank one and merges them into one file;
// InitFromEnvironment reads these settings from the variables hvdrun sets (HVDRUN_TIMELINE: a
// directory, for DIR/rank-R.json sent to hvdrun at the end; HOROVOD_TIMELINE_MARK_CYCLES), or from
// HOROVOD_TIMELINE on rank 0 outside hvdrun, as Horovod.
struct TimelineSettings {
  // This rank's file, created (or truncated) when the runtime starts; empty: no timeline. Its
  // directory is created if missing.
  std::string path;
  // Shown in the rank's name in the trace ("rank 1 (server2)"); may be empty.
  std::string host;
  // A CYCLE_START mark at each negotiation cycle that has work (Horovod's --timeline-mark-cycles).
  bool mark_cycles = false;
  // When the runtime ends, send the file to hvdrun (KeyValueStore::SendTimelinePiece) and delete it,
  // and its directory once that is empty: hvdrun asks this of every rank it starts.
  bool send_to_launcher = false;
};

// Gradient compression (docs/compression.md): every float32 sum and average this runtime reduces
// travels in `format` (other types and operations travel as they are). fp16 and bf16 reduce as
// Horovod's Compression.fp16 (an average divided before the sum); fp8 keeps accuracy with four
// safeguards, each of which can be switched off to show what it guards against. Every rank must use
// the same settings. InitFromEnvironment reads them from HVDRUN_COMPRESSION, HVDRUN_FP8_SCALING,
// HVDRUN_FP8_SAFE_CAST, HVDRUN_FP8_FLOAT32_SUMS and HVDRUN_ERROR_FEEDBACK (hvdrun --compression and its
// flags).
struct CompressionOptions {
  CompressionFormat format = CompressionFormat::kNone;
  // fp8: blocks of values scaled by a power of two every rank agrees on, so that small gradients
  // do not fall below fp8's smallest value.
  bool scaling = true;
  // fp8: values beyond the format's largest become its largest (never NaN or infinity), and values
  // below its smallest normal keep their subnormal precision. Off: a naive cast, which makes them
  // NaN (E4M3) or infinity (E5M2), and zero.
  bool safe_cast = true;
  // fp8: each rank sums its share of every rank's values in float32 (an alltoall, then an
  // allgather of the encoded sums); off, the values are summed in fp8, rounded after each addition.
  bool float32_sums = true;
  // fp8: what encoding lost is added to the same tensor's values the next time they are reduced.
  bool error_feedback = true;
};

// An elastic job's worker (docs/elastic.md): hosts may come and go, and the job goes on in rounds.
// InitFromEnvironment reads these from HVDRUN_ELASTIC, HVDRUN_WORKER_ID, HVDRUN_ROUND and
// HVDRUN_ELASTIC_TIMEOUT_SECONDS. In round r every key the runtime uses in the store is under
// "r<r>/", so that processes of different rounds never meet. A Runtime that this worker creates when
// all of its earlier ones have been destroyed (re-initialization) first waits for the store's
// "elastic/round" to name a newer round holding "elastic/<round>/rank/<worker_id>", and takes its
// place in the job (the rank fields of RuntimeOptions) from that key. Its collectives fail with
// ErrorKind::kRecoverable (hvdrun/error_kind.h) when a peer is lost. Gloo and NCCL only: MPI jobs
// are not elastic.
struct ElasticOptions {
  bool enabled = false;
  // Unique to this process for the whole job, never reused (hvdrun gives "<host>/<slot>/<n>").
  std::string worker_id;
  // The round the rank fields of the first Runtime's options describe.
  int round = 0;
  // How long re-initialization waits for this worker's place in a newer round (Horovod's 600 s).
  std::chrono::milliseconds assignment_timeout{std::chrono::seconds(600)};
};

// Everything Runtime::Init needs. The rank fields describe this rank's place in the job (ranks are
// host-major, as hvdrun starts them: local_* within its host, cross_* among the hosts); the rest
// are the job's, the same on every rank.
struct RuntimeOptions {
  BackendKind backend = BackendKind::kGloo;
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  int cross_rank = 0;
  int cross_size = 1;
  // The job's key-value store, which the backend bootstraps through. InitFromEnvironment connects to hvdrun's
  // rendezvous service; tests may pass any store shared by their ranks.
  std::shared_ptr<KeyValueStore> store;
  // Address this rank's backend listens on and advertises to the others (Gloo's TCP device).
  std::string host_address = "127.0.0.1";
  // Limit for bootstrapping (every rank must arrive within it). InitFromEnvironment reads
  // HOROVOD_GLOO_TIMEOUT_SECONDS (default 30 s). A collective waits for a live rank as long as it
  // takes, or up to the stall shutdown time when one is set (NegotiationOptions::stall_shutdown); a
  // rank that is gone fails it at once.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // The CPU the runtime's collective thread is pinned to (Horovod's HOROVOD_THREAD_AFFINITY); -1: none.
  int collective_thread_cpu = -1;
  CollectiveOrder order = CollectiveOrder::kCallOrder;
  NegotiationOptions negotiation;
  // The timeline records the negotiated path's responses, each with its negotiation, queue, copies
  // and backend call (CollectiveOrder::kNegotiated); in call-order mode the file holds no response.
  TimelineSettings timeline;
  // Both collective orders; with negotiation, fused buffers are compressed whole.
  CompressionOptions compression;
  // Allreduces of a job whose ranks are all on one host go through a shared-memory segment of that
  // host (each rank reduces its slice of every rank's values, synchronized by futexes), not through
  // the backend, when the backend reduces host memory (Gloo, MPI). Every rank must choose the same.
  // InitFromEnvironment reads it from HVDRUN_SHM (hvdrun --shared-memory on|off); on by default.
  bool shared_memory = true;
  // Jobs on several hosts with the same number of ranks each, over Gloo: each allreduce is reduced
  // inside every host through its shared memory, each local rank's slice of the host's sum is
  // allreduced over Gloo with the same local rank of the other hosts, and the hosts' ranks gather the
  // slices through shared memory again, so that one copy of the buffer per host crosses the network
  // (Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE, which InitFromEnvironment reads; hvdrun
  // --hierarchical-allreduce and --no-hierarchical-allreduce). On by default: it runs only where it
  // applies (Gloo, shared_memory, several hosts of the same number of ranks, at least 2), and there it
  // is faster than the flat ring (docs/benchmarks.md). Every rank must choose the same.
  bool hierarchical_allreduce = true;
  // Off by default: a lost rank fails the job's collectives for good.
  ElasticOptions elastic;
  AutotuneOptions autotune;
};

}  // namespace hvdrun

#endif  // HVDRUN_OPTIONS_H_
