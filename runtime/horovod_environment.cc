#include "runtime/horovod_environment.h"

#include <sched.h>

#include <cstdio>
#include <ctime>
#include <string>
#include <utility>

#include "common/env_names.h"
#include "common/error_text.h"
#include "common/host/network_interfaces.h"

namespace hvdrun {
namespace {

// Horovod's default for HOROVOD_GLOO_TIMEOUT_SECONDS (gloo_context.cc).
constexpr std::chrono::seconds kHorovodGlooTimeout{30};

std::string Setting(const char* name, const char* value) {
  return std::string(name) + "=" + PrintableText(value);
}

StatusOr<std::optional<int64_t>> ReadWhole(const EnvironmentReader& env, const char* name, WholeRange range) {
  if (env.Find(name) == nullptr) return std::optional<int64_t>();
  StatusOr<int64_t> value = env.RequiredWholeNumber(name, range.min, range.max);
  if (!value.ok()) return value.status();
  return std::optional<int64_t>(value.value());
}

StatusOr<std::optional<bool>> ReadSwitch(const EnvironmentReader& env, const char* name) {
  const char* text = env.Find(name);
  if (text == nullptr) return std::optional<bool>();
  std::optional<bool> on = ParseHorovodSwitch(text);
  if (!on) return Status::Error(std::string(name) + "='" + PrintableText(text) + "' is not " + kSwitchForm);
  return on;
}

Status ReadMessages(const EnvironmentReader& env, HorovodSettings& settings) {
  if (const char* text = env.Find(env::kHorovodLogLevel); text != nullptr) {
    std::optional<LogLevel> level = ParseLogLevel(text);
    if (!level) {
      return Status::Error(std::string(env::kHorovodLogLevel) + "='" + PrintableText(text) + "' is not " +
                           kLogLevelForm);
    }
    settings.messages.level = *level;
  }
  StatusOr<std::optional<bool>> hide_time = ReadSwitch(env, env::kHorovodLogHideTime);
  if (!hide_time.ok()) return hide_time.status();
  settings.messages.time_stamps = hide_time.value() == false;
  return Status::Ok();
}

Status ReadTimeouts(const EnvironmentReader& env, RuntimeOptions& options, HorovodSettings& settings) {
  StatusOr<std::optional<int64_t>> gloo = ReadWhole(env, env::kHorovodGlooTimeout, kSecondsRange);
  if (!gloo.ok()) return gloo.status();
  options.timeout = gloo.value() ? std::chrono::seconds(*gloo.value()) : kHorovodGlooTimeout;
  StatusOr<std::optional<int64_t>> start = ReadWhole(env, env::kHorovodStartTimeout, kSecondsRange);
  if (!start.ok()) return start.status();
  if (start.value()) settings.start_timeout = std::chrono::seconds(*start.value());
  return Status::Ok();
}

// As Horovod's stall inspector: off with HOROVOD_STALL_CHECK_DISABLE=1 (no shutdown either); a
// shutdown time below the warning time is ignored.
Status ReadStallCheck(const EnvironmentReader& env, NegotiationOptions& negotiation,
                      HorovodSettings& settings) {
  StatusOr<std::optional<bool>> disabled = ReadSwitch(env, env::kHorovodStallCheckDisable);
  if (!disabled.ok()) return disabled.status();
  negotiation.stall_check = disabled.value() != true;
  StatusOr<std::optional<int64_t>> watchdog = ReadWhole(env, env::kWatchdogTime, kShutdownSecondsRange);
  if (!watchdog.ok()) return watchdog.status();
  if (watchdog.value()) negotiation.watchdog = std::chrono::seconds(*watchdog.value());
  StatusOr<std::optional<int64_t>> shutdown =
      ReadWhole(env, env::kHorovodStallShutdownTime, kShutdownSecondsRange);
  if (!shutdown.ok()) return shutdown.status();
  if (!shutdown.value() || *shutdown.value() == 0) return Status::Ok();
  const std::string set = Setting(env::kHorovodStallShutdownTime, env.Find(env::kHorovodStallShutdownTime));
  const std::chrono::seconds seconds(*shutdown.value());
  if (!negotiation.stall_check) {
    settings.notes.push_back(set + ": the stall check is off (" + env::kHorovodStallCheckDisable +
                             "=1), so stalled collectives wait on, as in Horovod");
  } else if (seconds < negotiation.stall_warning) {
    settings.notes.push_back(set + ": below the stall warning time (" +
                             DurationText(negotiation.stall_warning) +
                             "), so stalled collectives wait on, as in Horovod");
  } else {
    negotiation.stall_shutdown = seconds;
  }
  return Status::Ok();
}

StatusOr<std::optional<HostLibrary>> ReadHostLibrary(const EnvironmentReader& env, const char* name) {
  const char* text = env.Find(name);
  if (text == nullptr) return std::optional<HostLibrary>();
  std::optional<HostLibrary> library = ParseHostLibrary(text);
  if (library == HostLibrary::kCcl) {
    return Status::Error(Setting(name, text) + ": oneCCL is not a library libhvdrun has (" +
                         kHostLibraryForm + ")");
  }
  if (!library) {
    return Status::Error(std::string(name) + "='" + PrintableText(text) + "' is not " + kHostLibraryForm);
  }
  return library;
}

// The backend for host memory: HOROVOD_CPU_OPERATIONS, else HOROVOD_CONTROLLER (libhvdrun
// negotiates over the library that carries host memory). Gloo can run in any job (hvdrun's
// rendezvous bootstraps it); MPI only where mpirun started the ranks.
Status ReadHostBackend(const EnvironmentReader& env, RuntimeOptions& options, HorovodSettings& settings) {
  StatusOr<std::optional<HostLibrary>> cpu = ReadHostLibrary(env, env::kHorovodCpuOperations);
  if (!cpu.ok()) return cpu.status();
  StatusOr<std::optional<HostLibrary>> controller = ReadHostLibrary(env, env::kHorovodController);
  if (!controller.ok()) return controller.status();
  const char* name = cpu.value() ? env::kHorovodCpuOperations : env::kHorovodController;
  const std::optional<HostLibrary> chosen = cpu.value() ? cpu.value() : controller.value();
  if (!chosen) return Status::Ok();
  if (cpu.value() && controller.value() && cpu.value() != controller.value()) {
    settings.notes.push_back(Setting(env::kHorovodController, env.Find(env::kHorovodController)) +
                             ": libhvdrun negotiates over the library that carries host memory, " +
                             Setting(env::kHorovodCpuOperations, env.Find(env::kHorovodCpuOperations)));
  }
  if (*chosen == HostLibrary::kMpi && options.backend != BackendKind::kMpi) {
    return Status::Error(Setting(name, env.Find(name)) +
                         ": MPI needs ranks that mpirun started, and hvdrun started " + "this one for " +
                         std::string(BackendName(options.backend)) + "; run hvdrun --mpi");
  }
  if (*chosen == HostLibrary::kGloo && options.backend == BackendKind::kMpi) {
    options.backend = BackendKind::kGloo;
  }
  return Status::Ok();
}

Status ReadGlooIface(const EnvironmentReader& env, RuntimeOptions& options, HorovodSettings& settings) {
  const char* iface = env.Find(env::kHorovodGlooIface);
  if (iface == nullptr) return Status::Ok();
  if (options.backend == BackendKind::kMpi) {
    settings.notes.push_back(Setting(env::kHorovodGlooIface, iface) +
                             ": this job's host memory goes over MPI, not Gloo; hvdrun --network-interface "
                             "chooses MPI's interfaces");
    return Status::Ok();
  }
  if (!IsValidInterfaceName(iface)) {
    return Status::Error(std::string(env::kHorovodGlooIface) + "='" + PrintableText(iface) +
                         "' is not an interface name");
  }
  const char* host = env.Find(env::kHostname);
  StatusOr<HostNetwork> network =
      ChooseHostNetwork(ListInterfaceAddresses(), {iface}, "", host != nullptr ? host : "");
  if (!network.ok()) {
    return Status::Error(Setting(env::kHorovodGlooIface, iface) + ": " + network.status().message());
  }
  options.host_address = network.value().address;
  return Status::Ok();
}

// One core per local rank, which this process may run on; fewer cores than local ranks is
// Horovod's logged error, and no thread is pinned.
Status ReadThreadAffinity(const EnvironmentReader& env, RuntimeOptions& options, HorovodSettings& settings) {
  const char* text = env.Find(env::kHorovodThreadAffinity);
  if (text == nullptr) return Status::Ok();
  std::optional<std::vector<int>> cores = ParseCoreList(text);
  if (!cores) {
    return Status::Error(std::string(env::kHorovodThreadAffinity) + "='" + PrintableText(text) + "' is not " +
                         kCoreListForm);
  }
  if (static_cast<int>(cores->size()) < options.local_size) {
    settings.notes.push_back(
        Setting(env::kHorovodThreadAffinity, text) + ": " + std::to_string(cores->size()) +
        " core id(s) for " + std::to_string(options.local_size) +
        " local ranks (one each is needed); no collective thread is pinned, as in Horovod");
    return Status::Ok();
  }
  const int core = (*cores)[static_cast<size_t>(options.local_rank)];
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) == 0 &&
      (core >= CPU_SETSIZE || !CPU_ISSET(core, &allowed))) {
    return Status::Error(Setting(env::kHorovodThreadAffinity, text) + ": core " + std::to_string(core) +
                         " (local rank " + std::to_string(options.local_rank) +
                         "'s) is not one this rank may run on");
  }
  options.collective_thread_cpu = core;
  return Status::Ok();
}

// Horovod's settings for what libhvdrun does not have, or not in this job: a note each.
Status NoteWhatCannotApply(const EnvironmentReader& env, const RuntimeOptions& options,
                           HorovodSettings& settings) {
  const std::string backend(BackendName(options.backend));
  const auto note_when = [&](const char* name, bool value, const std::string& what) -> Status {
    StatusOr<std::optional<bool>> on = ReadSwitch(env, name);
    if (!on.ok()) return on.status();
    if (on.value() == value) settings.notes.push_back(Setting(name, env.Find(name)) + ": " + what);
    return Status::Ok();
  };
  Status status =
      note_when(env::kHorovodHierarchicalAllgather, true,
                "libhvdrun has no hierarchical allgather; allgathers run in one step over " + backend);
  if (status.ok()) {
    status = note_when(env::kHorovodTorusAllreduce, true,
                       "libhvdrun has no torus allreduce; allreduces run over " + backend + " as they would");
  }
  if (status.ok() && options.backend == BackendKind::kMpi) {
    status = note_when(env::kHorovodHierarchicalAllreduce, true,
                       "libhvdrun's hierarchical allreduce runs over gloo only; this job's run over mpi");
  }
  if (status.ok()) {
    status =
        options.backend == BackendKind::kMpi
            ? note_when(
                  env::kHorovodMpiThreadsDisable, false,
                  "libhvdrun initialises MPI at MPI_THREAD_SERIALIZED (it calls MPI from one thread at a "
                  "time), never MPI_THREAD_MULTIPLE")
            : note_when(env::kHorovodMpiThreadsDisable, true,
                        "applies to MPI, and this job's ranks use " + backend);
  }
  if (!status.ok()) return status;
  StatusOr<std::optional<int64_t>> streams = ReadWhole(env, env::kHorovodNumNcclStreams, kNcclStreamsRange);
  if (!streams.ok()) return streams.status();
  if (!streams.value()) return Status::Ok();
  const std::string set = Setting(env::kHorovodNumNcclStreams, env.Find(env::kHorovodNumNcclStreams));
  if (options.backend != BackendKind::kNccl) {
    settings.notes.push_back(set + ": applies to NCCL (hvdrun --nccl), and this job's ranks use " + backend);
  } else if (*streams.value() > 1) {
    settings.notes.push_back(set +
                             ": libhvdrun's NCCL backend runs each runtime's collectives on one stream");
  }
  return Status::Ok();
}

}  // namespace

void RuntimeMessages::Print(LogLevel severity, const std::string& line) const {
  if (!Shows(severity)) return;
  std::string stamp;
  if (time_stamps) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    ::localtime_r(&now, &local);
    char text[32];
    const size_t length = std::strftime(text, sizeof(text), "[%Y-%m-%d %H:%M:%S] ", &local);
    stamp.assign(text, length);
  }
  std::fprintf(stderr, "%slibhvdrun: %s\n", stamp.c_str(), line.c_str());
}

StatusOr<HorovodSettings> ReadHorovodSettings(const EnvironmentReader& env, RuntimeOptions& options) {
  HorovodSettings settings;
  Status status = ReadMessages(env, settings);
  if (status.ok()) status = ReadTimeouts(env, options, settings);
  if (status.ok()) status = ReadStallCheck(env, options.negotiation, settings);
  if (status.ok()) status = ReadHostBackend(env, options, settings);
  if (status.ok()) status = ReadGlooIface(env, options, settings);
  if (status.ok()) status = ReadThreadAffinity(env, options, settings);
  if (status.ok()) status = NoteWhatCannotApply(env, options, settings);
  if (!status.ok()) return status;
  options.negotiation.warn = [messages = settings.messages](const std::string& line) {
    messages.Print(LogLevel::kWarning, line);
  };
  return settings;
}

}  // namespace hvdrun
