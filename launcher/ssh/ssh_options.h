// SshOptions: how hvdrun reaches the hosts that are not this machine (the --ssh-* flags).
//
// Each field's default defers to the user's ~/.ssh/config (as libssh reads it), then to OpenSSH's
// own default, so that a host that `ssh host` reaches is reached by hvdrun the same way.
#ifndef HVDRUN_LAUNCHER_SSH_SSH_OPTIONS_H_
#define HVDRUN_LAUNCHER_SSH_SSH_OPTIONS_H_

#include <string>

namespace hvdrun {

struct SshOptions {
  // --ssh-user; empty: ~/.ssh/config's User, else the user running hvdrun.
  std::string user;
  // -p/--ssh-port; 0: ~/.ssh/config's Port, else 22.
  int port = 0;
  // -i/--ssh-identity-file: tried after the ssh-agent's keys and before the default keys
  // (~/.ssh/id_ed25519, ...); empty: the agent's keys and the default keys only.
  std::string identity_file;
  // --ssh-known-hosts; empty: ~/.ssh/known_hosts.
  std::string known_hosts;
  // --ssh-accept-new-host-keys: a host missing from known_hosts is trusted and recorded there.
  // A host whose key differs from the recorded one is refused whatever this says.
  bool accept_new_host_keys = false;
  // This machine's own hvdrun-agent (an absolute path), started on a host whose PATH has no
  // hvdrun-agent: labs often share one install prefix or an NFS home (Open MPI's mpirun, run by its
  // absolute path, tries its own prefix on the other hosts the same way). hvdrun sets it only when
  // --agent-path is not given (launcher/main.cc); empty: the agent path alone is tried.
  std::string agent_fallback_path;
};

}  // namespace hvdrun

#endif  // HVDRUN_LAUNCHER_SSH_SSH_OPTIONS_H_
