// Test helpers: what of hvdrun's shared memory has a name in /dev/shm (nothing should: the
// segment is a memfd, runtime/shm/shm_segment.h). For the unit and end-to-end tests only.
//
// Other programs on the machine may add entries of their own while a test runs (MPI, a concurrent
// test of another build of hvdrun, whose entries are named hvdrun-* too); such an entry is held
// (open or mapped) by a process that is not the test's, for as long as it has its name.
#ifndef HVDRUN_RUNTIME_SHM_DEV_SHM_ENTRIES_H_
#define HVDRUN_RUNTIME_SHM_DEV_SHM_ENTRIES_H_

#include <sys/types.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace hvdrun::testing {

// The names in /dev/shm.
inline std::set<std::string> DevShmEntries() {
  std::set<std::string> entries;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    entries.insert(entry.path().filename().string());
  }
  return entries;
}

// /proc/PID/maps ("" when it cannot be read).
inline std::string ProcessMaps(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/maps");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Whether process `pid` has /dev/shm/`name` open or mapped.
inline bool HoldsDevShmEntry(pid_t pid, const std::string& name) {
  const std::string path = "/dev/shm/" + name;
  if (ProcessMaps(pid).find(path) != std::string::npos) return true;
  std::error_code error;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
    std::error_code unreadable;
    if (std::filesystem::read_symlink(fd.path(), unreadable).string() == path) return true;
  }
  return false;
}

// The entries of /dev/shm, not in `before`, that may be hvdrun's: named hvdrun-* or held by one of
// the test's processes `ours`, and held by no other process.
inline std::vector<std::string> NewHvdrunEntries(const std::set<std::string>& before,
                                                 const std::vector<pid_t>& ours) {
  std::vector<std::string> found;
  for (const std::string& entry : DevShmEntries()) {
    if (before.count(entry) != 0) continue;
    const bool held_by_ours =
        std::any_of(ours.begin(), ours.end(), [&](pid_t pid) { return HoldsDevShmEntry(pid, entry); });
    if (!held_by_ours && entry.rfind("hvdrun", 0) != 0) continue;
    bool held_by_another = false;
    std::error_code error;
    for (const auto& process : std::filesystem::directory_iterator("/proc", error)) {
      const std::string name = process.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      const auto pid = static_cast<pid_t>(std::stol(name));
      if (std::find(ours.begin(), ours.end(), pid) != ours.end()) continue;
      if (HoldsDevShmEntry(pid, entry)) {
        held_by_another = true;
        break;
      }
    }
    // An entry gone by now was another program's, which ended with it.
    if (!held_by_another && std::filesystem::exists("/dev/shm/" + entry, error)) found.push_back(entry);
  }
  return found;
}

}  // namespace hvdrun::testing

#endif  // HVDRUN_RUNTIME_SHM_DEV_SHM_ENTRIES_H_
