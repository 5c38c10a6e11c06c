// RendezvousServer: hvdrun's per-job rendezvous and collector service.
//
// One TCP port, bound to one address given by the launcher (never a wildcard), served by a thread
// of its own with Boost.Asio. Ranks (common/protocol/rendezvous_client.h) connect, prove they hold the job
// secret, then use a key-value store scoped to the job (their backends bootstrap through it: Gloo's
// addresses, NCCL's unique id) and at the end send a per-rank report, which the launcher reads with
// Reports(). docs/protocol.md, "Rendezvous service", describes the wire format.
//
// In parts: this class is the launcher's handle; rendezvous_listener.h accepts connections on the
// service's thread, rendezvous_connection.h runs each one (handshake, requests, idle limit), and
// rendezvous_store.h keeps the job's key-value table (common/protocol/key_value_table.h) and reports.
//
// Failures never reach the caller after Start: a connection that fails to authenticate, breaks the
// protocol, exceeds a limit that cannot be answered, or stays idle too long is closed, and one line
// naming its peer address (never the secret) goes to the `log` callback, which is called on the
// service's thread. Requests that break a limit get an error response and the connection stays.
//
// Thread safety: Reports(), ValuesWithPrefix(), KeepTimelines() and port() may be called from any
// thread. Destruction stops
// the thread; every client then waiting in get/wait receives an error, every connection is closed.
#ifndef HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_SERVER_H_
#define HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_SERVER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "hvdrun/status.h"

namespace hvdrun {

class RendezvousListener;

struct RendezvousLimits {
  // Longest key. Backends use short names ("gloo/3", "nccl/unique_id"); 1 KiB is ample.
  size_t max_key_bytes = 1024;
  // Largest value. Backends store at most a few KiB (Gloo's addresses, NCCL's 128-byte id); 16 MiB
  // leaves room for user data without letting one Set exhaust memory.
  size_t max_value_bytes = 16u << 20;
  // Largest report (a rank's JSON, with per-step timings of a long run). Values above the
  // protocol's frame limit (rendezvous::kMaxFrameBytes, 64 MiB + 64 KiB) are lowered to 64 MiB.
  size_t max_report_bytes = 64u << 20;
  // Keys in the store: a few per rank for the largest jobs hvdrun runs (-np up to thousands).
  size_t max_keys = 65536;
  // Bytes of all keys and values together: caps the memory the store can take.
  size_t max_store_bytes = size_t{1} << 30;
  // Bytes of all reports together (1 GiB: 16 KiB for each of 65536 ranks, or a few big ones).
  size_t max_total_report_bytes = size_t{1} << 30;
  // Keys named in one wait request.
  size_t max_wait_keys = 65536;
  // Open connections: one per rank is usual, so 1024 ranks per job before refusals start.
  size_t max_connections = 1024;
  // A connection that has not authenticated within this long is refused (and logged): a rank
  // answers at once, so only something that is not a rank waits longer.
  std::chrono::milliseconds auth_timeout{std::chrono::seconds(10)};
  // An authenticated connection that sends nothing for this long, while not waiting in get/wait,
  // is closed (and logged); 0 never closes one. Ranks connect at start, then train for as long as
  // the job runs, quiet, and send their report at the end: the client (RendezvousClient) finds the
  // connection closed before its next request, reconnects and authenticates again, so closing a
  // quiet connection costs a rank one handshake, and frees what a vanished peer held. The service
  // closes only a connection with no request in flight, which is what makes that safe.
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(10)};
};

class RendezvousServer {
 public:
  // Starts serving on bind_address (an IP literal, e.g. "127.0.0.1"; "0.0.0.0" and "::" are
  // refused), on a port chosen by the OS, on a thread of its own. secret_hex is the job secret
  // (common/protocol/job_secret.h: 64 lower-case hex digits). `log` receives one line per refused or
  // closed-on-error connection, without a trailing newline ("hvdrun: rendezvous: refused
  // 127.0.0.1:41234: wrong secret").
  static StatusOr<std::unique_ptr<RendezvousServer>> Start(const std::string& bind_address,
                                                           const std::string& secret_hex,
                                                           std::function<void(const std::string&)> log,
                                                           RendezvousLimits limits = {});
  // Stops the thread and closes every connection; clients waiting in get/wait get an error.
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;

  uint16_t port() const;
  // Reports received so far, by rank (JSON text as sent; a rank that reports twice keeps its last).
  std::map<int, std::string> Reports() const;
  // The keys of the store that begin with `prefix`, with their values, as they are now: how hvdrun
  // reads what its own processes left there (the rank records of common/process/rank_exit_record.h).
  std::map<std::string, std::string> ValuesWithPrefix(std::string_view prefix) const;
  // From now on, the timeline pieces ranks send (rendezvous::TimelineRequest: ranks on other hosts
  // than hvdrun's, at the end of their run) are written to DIR/rank-R.json; before, they are
  // refused. DIR must exist.
  void KeepTimelines(std::string dir);
  // Stores key = value in the job's table as a rank's set would, waking the ranks that wait for
  // it. Asynchronous: done on the service's thread, in the order of the calls.
  void Set(std::string key, std::string value);

 private:
  explicit RendezvousServer(std::unique_ptr<RendezvousListener> listener);
  std::unique_ptr<RendezvousListener> listener_;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_RENDEZVOUS_RENDEZVOUS_SERVER_H_
