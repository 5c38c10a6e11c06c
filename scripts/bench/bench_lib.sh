# shellcheck shell=bash
# shellcheck disable=SC2034,SC2154  # variables shared with the script that sources this file
# Sourced, not run: what the benchmark scripts of scripts/bench/ share. bench_name, which starts
# each error line, is the script's file name unless the script set it before sourcing; repo_root,
# build and stage are set as below.
#
#   bench_die MESSAGE                 prints "NAME: MESSAGE" on stderr and exits 2
#   bench_parse_flags HELP FLAG=VAR... -- "$@"
#                                     sets VAR from "--FLAG VALUE" or "--FLAG=VALUE" (FLAG=!VAR: a
#                                     switch, VAR=1); -h/--help prints lines HELP (sed's "2,14p"
#                                     form) of the script, its header, or runs HELP when it names a
#                                     function; anything else is refused
#   bench_whole_number FLAG VALUE LEAST
#                                     exits 2 unless VALUE is a whole number >= LEAST
#   bench_tc_rate FLAG VALUE          exits 2 unless VALUE is a tc rate (1gbit, 100mbit, 10mbps)
#   bench_build_with PROGRAM...       makes $build (a build tree) absolute; exits 2 unless each
#                                     PROGRAM is in its bin/
#   bench_stage_with PROGRAM...      exits 2 unless each PROGRAM is in $stage/bin (an installed
#                                     hvdrun: cmake --install build --prefix $stage)
#   bench_out_dir                     sets out: $keep (created, made absolute) when the script set
#                                     it (--keep), else a temporary directory that bench_cleanup removes
#   bench_run_staged LOG COMMAND...   runs COMMAND with $stage/bin first in PATH, its output
#                                     discarded and its stderr in LOG; when it fails, prints LOG's
#                                     last 20 lines and exits 1
#   bench_time_us COMMAND...          runs COMMAND, output discarded, and prints its wall time in
#                                     microseconds; exits 1 with its stderr when it fails
#   bench_percentile P SORTED...      the P-th percentile (0..100) of sorted values
#   bench_ms MICROSECONDS             as milliseconds with one decimal
#   bench_compare_launches ROUNDS     times the arrays hvdrun_cmd and mpirun_cmd, interleaved, and
#                                     prints the table of median, p10 and p90 and the ratio
#   bench_autotune_rounds ROUNDS SETTING...
#                                     ROUNDS rounds, each running, in an order that rotates every
#                                     round, `run_fixed fixed_MB_MS MB MS ROUND` for each SETTING
#                                     (MB/MS) and `run_tuned ROUND`: functions the script defines
#   bench_cluster_up HOSTS [ARGS...]  starts the test cluster (hvdrun-test-cluster in $build/bin,
#                                     docs/testing-cluster.md) and waits for it: sets cluster_pid,
#                                     run_id and run_dir; bench_cluster_down (which bench_cleanup
#                                     runs on exit) stops it
#   bench_cluster_hvdrun VAR BIN NP HOSTS [ARG...]
#                                     sets array VAR to the command that runs BIN/hvdrun -np NP -H HOSTS
#                                     ARG... from the running test cluster's launcher namespace, with
#                                     the cluster's SSH key and known hosts and BIN/hvdrun-agent as the
#                                     agent (BIN: a bin/ folder holding both)
#   bench_shape_links RATE SERVER...  shapes each link but lo of each SERVER of the running test
#                                     cluster to RATE (`tc qdisc ... tbf`: a lab network's links)
#   bench_on_exit COMMAND             one more command for bench_cleanup, which runs on exit

: "${bench_name:=$(basename "$0")}"
# The checkout, and the defaults of --build (a build tree) and --stage (an installed hvdrun: cmake
# --install build --prefix build/stage) for the scripts that take them.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$repo_root/build"
stage="$repo_root/build/stage"

bench_die() {
  echo "$bench_name: $*" >&2
  exit 2
}

bench_parse_flags() {
  local help=$1
  shift
  local -A vars=() switches=()
  while (($# > 0)) && [[ "$1" != -- ]]; do
    if [[ "$1" == *=!* ]]; then switches["--${1%%=*}"]=${1#*=!}; else vars["--${1%%=*}"]=${1#*=}; fi
    shift
  done
  shift
  while (($# > 0)); do
    local flag=${1%%=*}
    if [[ "$1" == -h || "$1" == --help ]]; then
      if declare -F "$help" >/dev/null; then "$help"; else sed -n "$help" "$0"; fi
      exit 0
    elif [[ -n "${switches[$1]:-}" ]]; then
      printf -v "${switches[$1]}" '%s' 1
      shift
    elif [[ -n "${vars[$flag]:-}" && "$1" == *=* ]]; then
      printf -v "${vars[$flag]}" '%s' "${1#*=}"
      shift
    elif [[ -n "${vars[$1]:-}" ]]; then
      (($# >= 2)) || bench_die "$1 needs a value"
      printf -v "${vars[$1]}" '%s' "$2"
      shift 2
    else
      bench_die "unknown argument '$1' (see --help)"
    fi
  done
}

bench_whole_number() {
  if ! [[ "$2" =~ ^[0-9]+$ ]] || ((10#$2 < $3)); then
    bench_die "$1: expected a whole number >= $3, got '$2'"
  fi
}

bench_tc_rate() {
  [[ "$2" =~ ^[0-9]+(\.[0-9]+)?([kmg]?bit|[kmg]?bps)$ ]] ||
    bench_die "$1: expected a tc rate such as 1gbit or 100mbit, got '$2'"
}

bench_build_with() {
  build="$(cd "$build" 2>/dev/null && pwd)" || bench_die "--build: no such directory"
  local program
  for program in "$@"; do
    [[ -x "$build/bin/$program" ]] || bench_die "no $build/bin/$program: build it, or pass --build DIR"
  done
}

bench_stage_with() {
  local program
  for program in "$@"; do
    [[ -x "$stage/bin/$program" ]] ||
      bench_die "no $program in $stage/bin (build, then cmake --install build --prefix $stage)"
  done
}

bench_out_dir() {
  if [[ -n "${keep:-}" ]]; then
    mkdir -p "$keep" || bench_die "--keep: cannot create '$keep'"
    out="$(cd "$keep" && pwd)"
  else
    out="$(mktemp -d)"
    bench_on_exit "rm -rf \"$out\""
  fi
}

bench_run_staged() {
  local log=$1
  shift
  if ! PATH="$stage/bin:$PATH" "$@" >/dev/null 2>"$log"; then
    echo "$bench_name: '$*' failed:" >&2
    tail -20 "$log" >&2
    exit 1
  fi
}

# Microseconds since the epoch: bash 5's $EPOCHREALTIME costs no process; `date` is the fallback.
# The digits are kept whatever the locale's decimal separator.
bench_now_us() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    local t="${EPOCHREALTIME//[!0-9]/}"
    echo "$((10#$t))"
  else
    local ns
    ns="$(date +%s%N)"
    echo "$((10#$ns / 1000))"
  fi
}

bench_time_us() {
  local start end err_log
  err_log="$(mktemp)"
  start="$(bench_now_us)"
  if ! "$@" >/dev/null 2>"$err_log"; then
    echo "$bench_name: '$*' failed:" >&2
    cat "$err_log" >&2
    rm -f "$err_log"
    exit 1
  fi
  end="$(bench_now_us)"
  rm -f "$err_log"
  echo "$((end - start))"
}

# Interpolated linearly between the two nearest samples (numpy's default method), rounded to a unit.
bench_percentile() {
  local p="$1"
  shift
  local -a v=("$@")
  local n=${#v[@]}
  local scaled=$((p * (n - 1)))
  local i=$((scaled / 100))
  local frac=$((scaled % 100))
  if ((i + 1 >= n)); then
    echo "${v[n - 1]}"
  else
    echo "$(((v[i] * (100 - frac) + v[i + 1] * frac + 50) / 100))"
  fi
}

bench_ms() {
  local us=$(($1 + 50))
  printf '%d.%d' "$((us / 1000))" "$(((us % 1000) / 100))"
}

# One warm-up run of each, then ROUNDS rounds whose order alternates, so that the machine's drift
# falls on both. Leaves the samples in hv_samples and mpi_samples, the statistics in hv_p10, hv_p50,
# hv_p90, mpi_p10, mpi_p50, mpi_p90 and ratio (of the medians, hvdrun / mpirun, two decimals).
bench_compare_launches() {
  local rounds=$1 round
  echo "hvdrun: ${hvdrun_cmd[*]}"
  echo "mpirun: ${mpirun_cmd[*]}"
  echo "warm-up, then $rounds rounds (order alternates each round)..."
  bench_time_us "${hvdrun_cmd[@]}" >/dev/null
  bench_time_us "${mpirun_cmd[@]}" >/dev/null
  hv_samples=()
  mpi_samples=()
  for ((round = 0; round < rounds; ++round)); do
    if ((round % 2 == 0)); then
      hv_samples+=("$(bench_time_us "${hvdrun_cmd[@]}")")
      mpi_samples+=("$(bench_time_us "${mpirun_cmd[@]}")")
    else
      mpi_samples+=("$(bench_time_us "${mpirun_cmd[@]}")")
      hv_samples+=("$(bench_time_us "${hvdrun_cmd[@]}")")
    fi
  done
  local -a hv_sorted mpi_sorted
  mapfile -t hv_sorted < <(printf '%s\n' "${hv_samples[@]}" | sort -n)
  mapfile -t mpi_sorted < <(printf '%s\n' "${mpi_samples[@]}" | sort -n)
  hv_p10="$(bench_percentile 10 "${hv_sorted[@]}")"
  hv_p50="$(bench_percentile 50 "${hv_sorted[@]}")"
  hv_p90="$(bench_percentile 90 "${hv_sorted[@]}")"
  mpi_p10="$(bench_percentile 10 "${mpi_sorted[@]}")"
  mpi_p50="$(bench_percentile 50 "${mpi_sorted[@]}")"
  mpi_p90="$(bench_percentile 90 "${mpi_sorted[@]}")"
  local ratio_x100=$(((hv_p50 * 100 + mpi_p50 / 2) / mpi_p50))
  ratio="$(printf '%d.%02d' "$((ratio_x100 / 100))" "$((ratio_x100 % 100))")"
  echo
  printf '%-8s %10s %10s %10s\n' "" "median ms" "p10 ms" "p90 ms"
  printf '%-8s %10s %10s %10s\n' hvdrun "$(bench_ms "$hv_p50")" "$(bench_ms "$hv_p10")" "$(bench_ms "$hv_p90")"
  printf '%-8s %10s %10s %10s\n' mpirun "$(bench_ms "$mpi_p50")" "$(bench_ms "$mpi_p10")" "$(bench_ms "$mpi_p90")"
}

bench_cleanup_commands=()
bench_on_exit() {
  bench_cleanup_commands+=("$1")
}
bench_cleanup() {
  bench_cluster_down
  local command
  for command in "${bench_cleanup_commands[@]}"; do eval "$command"; done
}
trap bench_cleanup EXIT

cluster_pid=""
bench_cluster_log=""
# With --ready-file among ARGS, waits for that file (up to 60 s); else for the cluster's "Ctrl-C"
# line (up to 30 s), from which it takes the run id.
bench_cluster_up() {
  local hosts=$1 ready="" i
  shift
  local -a args=("$@")
  for ((i = 0; i + 1 < ${#args[@]}; ++i)); do
    [[ "${args[i]}" == --ready-file ]] && ready="${args[i + 1]}"
  done
  bench_cluster_log="$(mktemp)"
  "$build/bin/hvdrun-test-cluster" up "$hosts" "$@" >"$bench_cluster_log" 2>&1 &
  cluster_pid=$!
  for ((i = 0; i < 600; ++i)); do
    if [[ -n "$ready" ]]; then
      [[ -f "$ready" ]] && break
    else
      grep -q '^Ctrl-C' "$bench_cluster_log" && break
      ((i < 300)) || break
    fi
    kill -0 "$cluster_pid" 2>/dev/null || { cat "$bench_cluster_log" >&2; bench_die "the test cluster did not start"; }
    sleep 0.1
  done
  if [[ -n "$ready" ]]; then
    [[ -f "$ready" ]] || { cat "$bench_cluster_log" >&2; bench_die "the test cluster was not ready within 60 s"; }
    run_id="$(sed -n 's/^run_id //p' "$ready")"
  else
    run_id="$(sed -n 's/^hvdrun test cluster \([^:]*\):.*/\1/p' "$bench_cluster_log")"
    [[ -n "$run_id" ]] || { cat "$bench_cluster_log" >&2; bench_die "the test cluster did not say its run id"; }
  fi
  run_dir="/run/hvdrun-cluster/$run_id"
}
bench_cluster_down() {
  if [[ -n "$cluster_pid" ]]; then
    kill -INT "$cluster_pid" 2>/dev/null || true
    wait "$cluster_pid" 2>/dev/null || true
    cluster_pid=""
  fi
  [[ -z "$bench_cluster_log" ]] || rm -f "$bench_cluster_log"
}

bench_cluster_hvdrun() {
  local -n bench_cluster_hvdrun_cmd=$1
  bench_cluster_hvdrun_cmd=(ip netns exec "$run_id-launcher" "$2/hvdrun" -np "$3" -H "$4" -i "$run_dir/id_ed25519"
    --ssh-known-hosts "$run_dir/known_hosts" --agent-path "$2/hvdrun-agent" "${@:5}")
}

bench_shape_links() {
  local rate=$1 server link
  shift
  local -a links
  for server in "$@"; do
    mapfile -t links < <(ip -n "$run_id-$server" -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }')
    for link in "${links[@]}"; do
      [[ "$link" == lo ]] && continue
      ip netns exec "$run_id-$server" tc qdisc replace dev "$link" root tbf rate "$rate" burst 512kb \
        latency 50ms || bench_die "tc could not shape $server's $link to $rate"
    done
  done
}

bench_autotune_rounds() {
  local rounds=$1 round k i
  shift
  local fixed_settings=("$@")
  local runs=$((${#fixed_settings[@]} + 1))
  for ((round = 1; round <= rounds; ++round)); do
    for ((k = 0; k < runs; ++k)); do
      i=$(((round + k) % runs))
      if ((i == ${#fixed_settings[@]})); then
        run_tuned "$round"
      else
        run_fixed "fixed_${fixed_settings[i]/\//_}" "${fixed_settings[i]%/*}" "${fixed_settings[i]#*/}" "$round"
      fi
    done
  done
}
