// FdListener and ReceiveFd: one process hands a file descriptor to chosen processes of its host
// over a Unix socket in the abstract namespace (ShmSegment's bootstrap, runtime/shm/shm_segment.h).
//
// The socket has no file: its name starts with a NUL byte, the kernel keeps it while the listener
// is open and drops it with the listener's last descriptor, SIGKILL included. The name is
// "hvdrun-" and 128 random bits, but anyone in the network namespace who learns it may connect, so
// the listener hands the descriptor only to a peer of its own user (SO_PEERCRED, which the kernel
// fills in at connect time and the peer cannot forge) that the caller admits by its pid; every
// other connection is closed, gets nothing and does not count.
//
// Every wait ends by a deadline (poll, SO_SNDTIMEO): nothing blocks forever.
//
// Not thread-safe: one thread uses a listener.
#ifndef HVDRUN_RUNTIME_SHM_FD_HANDOVER_H_
#define HVDRUN_RUNTIME_SHM_FD_HANDOVER_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "hvdrun/status.h"

namespace hvdrun {

// A connected peer as the kernel saw it at connect time.
struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
};

class FdListener {
 public:
  using Clock = std::chrono::steady_clock;
  // Why a peer of this user gets nothing: "" admits it.
  using Admit = std::function<std::string(const PeerCredentials& peer)>;

  // Binds a socket (close-on-exec) under a fresh random abstract name and listens on it.
  static StatusOr<std::unique_ptr<FdListener>> Listen();
  // Closes the socket: from then on connecting to its name is refused, and peers still waiting in
  // its backlog see their connection reset.
  ~FdListener();
  FdListener(const FdListener&) = delete;
  FdListener& operator=(const FdListener&) = delete;

  // The socket's name without its leading NUL: "hvdrun-<32 hex digits>".
  const std::string& name() const { return name_; }

  // Accepts connections until `peers` admitted peers have received `fd` (one byte of data with the
  // descriptor as SCM_RIGHTS), or until `deadline`. A peer of another user, or one that `admit`
  // turns away, is closed and not counted. At the deadline the error is "did not connect within
  // T ms" (T: `timeout`, for the message), followed by the connections turned away, if any.
  Status Serve(int fd, int peers, Clock::time_point deadline, std::chrono::milliseconds timeout,
               const Admit& admit);

 private:
  FdListener(int socket, std::string name) : socket_(socket), name_(std::move(name)) {}

  const int socket_;
  const std::string name_;
};

// Connects to the listener named `name` (without its NUL) and receives its descriptor, by
// `deadline`. The listening socket must belong to this user's process `server_pid`. Returns the
// descriptor, close-on-exec, which the caller closes.
StatusOr<int> ReceiveFd(const std::string& name, pid_t server_pid,
                        std::chrono::steady_clock::time_point deadline);

// The listener's name for 16 random bytes: "hvdrun-" and 32 hex digits.
std::string FdListenerName(const unsigned char (&random)[16]);

}  // namespace hvdrun

#endif  // HVDRUN_RUNTIME_SHM_FD_HANDOVER_H_
