// Every environment variable that hvdrun sets or reads, declared once, with its meaning.
//
// Ranks receive each value under three names: hvdrun's own (HVDRUN_*), Horovod's (HOROVOD_*), so
// that Horovod programs run unchanged, and PyTorch's (RANK, WORLD_SIZE, ...), so that
// torch.distributed programs with init_method="env://" run unchanged.
#ifndef HVDRUN_COMMON_ENV_NAMES_H_
#define HVDRUN_COMMON_ENV_NAMES_H_

namespace hvdrun::env {

// Global rank of this process, 0..size-1, assigned host-major (the first host gets 0..k-1).
inline constexpr const char* kRank = "HVDRUN_RANK";
// Number of ranks in the job.
inline constexpr const char* kSize = "HVDRUN_SIZE";
// Rank among the ranks on the same host, 0..local_size-1.
inline constexpr const char* kLocalRank = "HVDRUN_LOCAL_RANK";
// Number of ranks on this host.
inline constexpr const char* kLocalSize = "HVDRUN_LOCAL_SIZE";
// Index of this host among the hosts that have a rank with this local rank (Horovod's definition).
inline constexpr const char* kCrossRank = "HVDRUN_CROSS_RANK";
// Number of hosts that have a rank with this local rank.
inline constexpr const char* kCrossSize = "HVDRUN_CROSS_SIZE";
// The host's name as written in -H or the hostfile.
inline constexpr const char* kHostname = "HVDRUN_HOSTNAME";
// Random identifier of this launch; also names result directories.
inline constexpr const char* kJobId = "HVDRUN_JOB_ID";
// The collective backend chosen with --gloo, --mpi or --nccl: "gloo", "mpi" or "nccl".
inline constexpr const char* kBackend = "HVDRUN_BACKEND";
// Where hvdrun's rendezvous and collector service listens (an address, not a wildcard) and its port.
inline constexpr const char* kRendezvousAddr = "HVDRUN_RENDEZVOUS_ADDR";
inline constexpr const char* kRendezvousPort = "HVDRUN_RENDEZVOUS_PORT";
// The job's secret (64 hex digits): every connection to the rendezvous service proves it holds it.
// It reaches ranks only through their environment; hvdrun never prints or stores it.
inline constexpr const char* kSecret = "HVDRUN_SECRET";
// The address of this rank's host on the network the job uses; backends listen there.
inline constexpr const char* kHostAddr = "HVDRUN_HOST_ADDR";
// With --network-interface: the interfaces named, comma-separated ("eth0,ib0"); each host's
// traffic uses the first of them it has. Under --mpi, `hvdrun-agent --mpi-rank` applies it on the
// rank's own host.
inline constexpr const char* kNetworkInterfaces = "HVDRUN_NETWORK_INTERFACES";
// With --network-interface, the same list under the names NCCL and PyTorch's Gloo read, so that
// a program's own NCCL or torch.distributed traffic takes the chosen interfaces too. Without it, in
// a job on several hosts, the interface that holds the rank's host's job address (unless the user
// set them in hvdrun's environment): torch's Gloo and NCCL's bootstrap otherwise bind to what the
// host's name resolves to, which Debian's /etc/hosts maps to 127.0.1.1.
inline constexpr const char* kNcclSocketIfname = "NCCL_SOCKET_IFNAME";
inline constexpr const char* kGlooSocketIfname = "GLOO_SOCKET_IFNAME";
// With --mpi: the job's hosts and how many ranks each runs, in rank order (host-major), in -H's
// syntax ("localhost:4"). hvdrun gives it to mpirun, which passes it to every `hvdrun-agent
// --mpi-rank`; the agent derives its rank's place from it and checks it against mpirun's own.
inline constexpr const char* kMpiLayout = "HVDRUN_MPI_LAYOUT";
// The rank's progress board (common/progress/progress_board.h): a file in its agent's private
// temporary directory, which the rank's runtime creates and maps at start and in which it publishes
// its collectives; absent, the runtime publishes nothing. HVDRUN_PROGRESS=0 in the rank's
// environment turns publishing off; HVDRUN_PROGRESS_RECORDS sets the flight recorder's length
// (1..4096, default 64).
inline constexpr const char* kProgressFile = "HVDRUN_PROGRESS_FILE";
inline constexpr const char* kProgress = "HVDRUN_PROGRESS";
inline constexpr const char* kProgressRecords = "HVDRUN_PROGRESS_RECORDS";

// Horovod's names for the same values.
inline constexpr const char* kHorovodRank = "HOROVOD_RANK";
inline constexpr const char* kHorovodSize = "HOROVOD_SIZE";
inline constexpr const char* kHorovodLocalRank = "HOROVOD_LOCAL_RANK";
inline constexpr const char* kHorovodLocalSize = "HOROVOD_LOCAL_SIZE";
inline constexpr const char* kHorovodCrossRank = "HOROVOD_CROSS_RANK";
inline constexpr const char* kHorovodCrossSize = "HOROVOD_CROSS_SIZE";
inline constexpr const char* kHorovodHostname = "HOROVOD_HOSTNAME";

// libhvdrun's negotiation and fusion settings (NegotiationOptions), under Horovod's names and in its
// units. hvdrun sets them from --fusion-threshold-mb, --cycle-time-ms and --cache-capacity.
inline constexpr const char* kHorovodFusionThreshold = "HOROVOD_FUSION_THRESHOLD";  // bytes; 0: fusion off
inline constexpr const char* kHorovodCycleTime = "HOROVOD_CYCLE_TIME";              // milliseconds, decimal
inline constexpr const char* kHorovodCacheCapacity = "HOROVOD_CACHE_CAPACITY";      // entries; 0: no cache
inline constexpr const char* kHorovodStallCheckTime = "HOROVOD_STALL_CHECK_TIME_SECONDS";

// Autotuning (AutotuneOptions, docs/autotune.md), under Horovod's names, from hvdrun --autotune and
// its flags: "1" turns it on; the log's path (rank 0 writes it); the warm-up samples, the steps per
// sample and the samples scored, whole numbers; the Gaussian process's noise, a decimal from 0 to 10.
inline constexpr const char* kHorovodAutotune = "HOROVOD_AUTOTUNE";
inline constexpr const char* kHorovodAutotuneLog = "HOROVOD_AUTOTUNE_LOG";
inline constexpr const char* kHorovodAutotuneWarmupSamples = "HOROVOD_AUTOTUNE_WARMUP_SAMPLES";
inline constexpr const char* kHorovodAutotuneStepsPerSample = "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE";
inline constexpr const char* kHorovodAutotuneBayesOptMaxSamples = "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES";
inline constexpr const char* kHorovodAutotuneGaussianProcessNoise = "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE";

// The timeline (RuntimeOptions::timeline). hvdrun --timeline-filename gives every rank HVDRUN_TIMELINE,
// a directory on the rank's host: its runtime writes DIR/rank-R.json there and, when it ends, sends
// the file to hvdrun (which merges every rank's) and deletes it. Outside hvdrun, Horovod's
// HOROVOD_TIMELINE names the file rank 0 writes, as in Horovod; in hvdrun's own environment or
// given with -x, it is hvdrun's --timeline-filename. HOROVOD_TIMELINE_MARK_CYCLES=1:
// --timeline-mark-cycles.
inline constexpr const char* kTimeline = "HVDRUN_TIMELINE";
inline constexpr const char* kHorovodTimeline = "HOROVOD_TIMELINE";
inline constexpr const char* kHorovodTimelineMarkCycles = "HOROVOD_TIMELINE_MARK_CYCLES";

// Gradient compression (CompressionOptions, docs/compression.md), from hvdrun --compression and
// its flags: the format ("none", "fp16", "bf16", "fp8" = "fp8-e4m3", "fp8-e5m2"), and fp8's four
// safeguards, each "1" (the default) or "0".
inline constexpr const char* kCompression = "HVDRUN_COMPRESSION";
inline constexpr const char* kFp8Scaling = "HVDRUN_FP8_SCALING";
inline constexpr const char* kFp8SafeCast = "HVDRUN_FP8_SAFE_CAST";
inline constexpr const char* kFp8Float32Sums = "HVDRUN_FP8_FLOAT32_SUMS";
inline constexpr const char* kErrorFeedback = "HVDRUN_ERROR_FEEDBACK";

// libhvdrun's shared-memory path (RuntimeOptions::shared_memory), from hvdrun --shared-memory:
// "1" (the default) or "0". With it on, the allreduces of a job whose ranks are all on one host go
// through that host's shared memory instead of the backend.
inline constexpr const char* kSharedMemory = "HVDRUN_SHM";
// Horovod's switch for hierarchical allreduce (RuntimeOptions::hierarchical_allreduce), "1" (the
// default, where it applies) or "0", from hvdrun --hierarchical-allreduce / --no-hierarchical-allreduce.
inline constexpr const char* kHorovodHierarchicalAllreduce = "HOROVOD_HIERARCHICAL_ALLREDUCE";

// The rest of Horovod's runtime variables, which libhvdrun reads at init (when exported, given with -x
// or set by the program before hvd.init()) and hvdrun's flags of horovodrun's names set: what each
// does in hvdrun is in docs/horovodrun.md; their values' forms in common/horovod_variables.h.
// Hierarchical allgather and NCCL's 2D torus allreduce: "1" or "0".
inline constexpr const char* kHorovodHierarchicalAllgather = "HOROVOD_HIERARCHICAL_ALLGATHER";
inline constexpr const char* kHorovodTorusAllreduce = "HOROVOD_TORUS_ALLREDUCE";
// The stall check: "1" turns it off; seconds before a named collective that some ranks have not
// submitted fails (0, the default: never).
inline constexpr const char* kHorovodStallCheckDisable = "HOROVOD_STALL_CHECK_DISABLE";
inline constexpr const char* kHorovodStallShutdownTime = "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS";
// libhvdrun's collective watchdog (runtime/collective_watchdog.h): seconds a call may stay in the
// backend before the rank logs it (default: the stall check time); off with the stall check.
inline constexpr const char* kWatchdogTime = "HVDRUN_WATCHDOG_SECONDS";
// "1": MPI is not initialised with MPI_THREAD_MULTIPLE.
inline constexpr const char* kHorovodMpiThreadsDisable = "HOROVOD_MPI_THREADS_DISABLE";
inline constexpr const char* kHorovodNumNcclStreams = "HOROVOD_NUM_NCCL_STREAMS";
// Core ids, comma-separated, one per local rank: the CPU of each rank's collective thread.
inline constexpr const char* kHorovodThreadAffinity = "HOROVOD_THREAD_AFFINITY";
// Seconds: libhvdrun's bootstrap and each backend operation's wait for the other ranks (default 30).
inline constexpr const char* kHorovodGlooTimeout = "HOROVOD_GLOO_TIMEOUT_SECONDS";
// TRACE, DEBUG, INFO, WARNING (the default), ERROR or FATAL; "1" in LOG_HIDE_TIME: no time stamps.
inline constexpr const char* kHorovodLogLevel = "HOROVOD_LOG_LEVEL";
inline constexpr const char* kHorovodLogHideTime = "HOROVOD_LOG_HIDE_TIME";
// The controller and the library of host-memory collectives: "gloo" or "mpi" (any case). hvdrun reads
// them, with no controller flag, to choose the job's controller; libhvdrun, to choose its backend.
inline constexpr const char* kHorovodController = "HOROVOD_CONTROLLER";
inline constexpr const char* kHorovodCpuOperations = "HOROVOD_CPU_OPERATIONS";
// The network interface whose address a rank's Gloo listens on.
inline constexpr const char* kHorovodGlooIface = "HOROVOD_GLOO_IFACE";
// Seconds: hvdrun's --start-timeout when the flag is not given; in a rank, how long its runtime
// tries to reach hvdrun's rendezvous service.
inline constexpr const char* kHorovodStartTimeout = "HOROVOD_START_TIMEOUT";
// Read by hvdrun.torch at hvd.init() (python/hvdrun/torch/completion.py): "1" or unset (the default,
// unlike Horovod's), synchronize() of a CUDA tensor's collective in a --nccl job completes it on the
// caller's current stream (CollectiveHandle::WaitOnStream); "0": it waits on the host.
inline constexpr const char* kHorovodEnableAsyncCompletion = "HOROVOD_ENABLE_ASYNC_COMPLETION";
// NCCL's switch for InfiniBand; hvdrun --tcp sets it to 1, as horovodrun does.
inline constexpr const char* kNcclIbDisable = "NCCL_IB_DISABLE";

// PyTorch's names (torchrun's set), for torch.distributed's env:// initialisation.
inline constexpr const char* kTorchRank = "RANK";
inline constexpr const char* kTorchWorldSize = "WORLD_SIZE";
inline constexpr const char* kTorchLocalRank = "LOCAL_RANK";
inline constexpr const char* kTorchLocalWorldSize = "LOCAL_WORLD_SIZE";
// Index of the host (torchrun's "group" is one node).
inline constexpr const char* kTorchGroupRank = "GROUP_RANK";
inline constexpr const char* kTorchGroupWorldSize = "GROUP_WORLD_SIZE";
// Rank 0's host and a TCP port that was free there when its agent started.
inline constexpr const char* kTorchMasterAddr = "MASTER_ADDR";
inline constexpr const char* kTorchMasterPort = "MASTER_PORT";

// Set by Open MPI's mpirun for each process it starts, read by `hvdrun-agent --mpi-rank`: the
// process's rank and the number of processes, in the job and on its node.
inline constexpr const char* kOmpiRank = "OMPI_COMM_WORLD_RANK";
inline constexpr const char* kOmpiSize = "OMPI_COMM_WORLD_SIZE";
inline constexpr const char* kOmpiLocalRank = "OMPI_COMM_WORLD_LOCAL_RANK";
inline constexpr const char* kOmpiLocalSize = "OMPI_COMM_WORLD_LOCAL_SIZE";
// Open MPI's seconds between its SIGTERM and SIGKILL to a process when it stops a job (default 1);
// mpirun passes it to its processes when it is set.
inline constexpr const char* kOmpiSigkillTimeout = "OMPI_MCA_odls_base_sigkill_timeout";

// Set by Slurm inside an allocation (salloc, sbatch, srun), read by hvdrun
// (common/placement/slurm_allocation.h): the job's id, its nodes as a compressed host list, the tasks each
// node may run (`2(x3),1`) and the job's task count. SLURM_NODELIST and SLURM_NPROCS are older names of the
// same values.
inline constexpr const char* kSlurmJobId = "SLURM_JOB_ID";
inline constexpr const char* kSlurmJobNodeList = "SLURM_JOB_NODELIST";
inline constexpr const char* kSlurmNodeList = "SLURM_NODELIST";
inline constexpr const char* kSlurmTasksPerNode = "SLURM_TASKS_PER_NODE";
inline constexpr const char* kSlurmNtasks = "SLURM_NTASKS";
inline constexpr const char* kSlurmNprocs = "SLURM_NPROCS";
// Set by slurmd for each task: the Slurm name of the node it runs on. hvdrun-agent names its node by
// it, since several slurmd may share one machine and its host name.
inline constexpr const char* kSlurmdNodeName = "SLURMD_NODENAME";
// srun's --cpu-bind as a variable; hvdrun sets it to "none" for the srun that starts an agent, so
// that the agent and its ranks are not pinned to the step's first CPU.
inline constexpr const char* kSlurmCpuBind = "SLURM_CPU_BIND";
// Set by slurmd for each task of a step, and given to every rank inside an allocation with the
// values of its place in hvdrun's job, as srun gives them to the tasks of one step laid out as
// hvdrun lays out the ranks (common/placement/rank_environment.h): an agent's own step has one task, and a
// rank would otherwise read SLURM_PROCID=0 and SLURM_NTASKS=1 whatever its rank. SLURM_NTASKS,
// SLURM_NPROCS and SLURM_TASKS_PER_NODE (above) are given too.
inline constexpr const char* kSlurmProcId = "SLURM_PROCID";    // the rank
inline constexpr const char* kSlurmLocalId = "SLURM_LOCALID";  // the rank on its node
inline constexpr const char* kSlurmNodeId = "SLURM_NODEID";    // the node's index among the job's hosts
inline constexpr const char* kSlurmGtids = "SLURM_GTIDS";      // the ranks on the node, comma-separated
inline constexpr const char* kSlurmNnodes = "SLURM_NNODES";    // the job's hosts
inline constexpr const char* kSlurmStepNumTasks = "SLURM_STEP_NUM_TASKS";
inline constexpr const char* kSlurmStepNumNodes = "SLURM_STEP_NUM_NODES";
inline constexpr const char* kSlurmStepTasksPerNode = "SLURM_STEP_TASKS_PER_NODE";
inline constexpr const char* kSlurmStepNodeList = "SLURM_STEP_NODELIST";  // the job's hosts, comma-separated
// The pid of the agent (the step's task); removed from every rank's environment.
inline constexpr const char* kSlurmTaskPid = "SLURM_TASK_PID";
// The allocation's name; srun's --job-name (hvdrun-agent, for the agents' steps) replaces it in a
// step, so ranks get hvdrun's own value back.
inline constexpr const char* kSlurmJobName = "SLURM_JOB_NAME";

// Elastic jobs (docs/elastic.md; the contract between hvdrun and the runtime). In every rank
// process of an elastic job: "1".
inline constexpr const char* kElastic = "HVDRUN_ELASTIC";
// The process's worker id, unique for the whole job and never reused ("<host>/<slot>/<spawn>").
inline constexpr const char* kWorkerId = "HVDRUN_WORKER_ID";
// The round the process was started in (the first: 0); its HVDRUN_RANK ... are its place in it.
inline constexpr const char* kRound = "HVDRUN_ROUND";
// Seconds a rank waits for its next round's place (hvdrun's --elastic-timeout).
inline constexpr const char* kElasticTimeoutSeconds = "HVDRUN_ELASTIC_TIMEOUT_SECONDS";
// Seconds: hvdrun's --elastic-timeout when the flag is not given (horovodrun reads it too).
inline constexpr const char* kHorovodElasticTimeout = "HOROVOD_ELASTIC_TIMEOUT";

}  // namespace hvdrun::env

#endif  // HVDRUN_COMMON_ENV_NAMES_H_
