#!/usr/bin/env bash
# Launch latency, one host: the wall time of starting and finishing a trivial two-rank job,
# `hvdrun -np 2 -H localhost:2 true` against Open MPI's `mpirun -np 2 true`, measured in the same
# run, interleaved round by round (the order alternates), after one warm-up run of each.
#
# It prints the median, p10 and p90 of each and the ratio of the medians (hvdrun / mpirun). It
# asserts nothing about the times: the machine is shared, so compare the ratio, not the
# milliseconds. See docs/benchmarks.md for the recorded results.
#
# Usage: scripts/bench/launch_latency.sh [--rounds N] [--hvdrun PATH] [--mpirun PATH] [--json FILE]
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/bench/launch_latency.sh [--rounds N] [--hvdrun PATH] [--mpirun PATH] [--json FILE]

Times `hvdrun -np 2 -H localhost:2 true` and `mpirun -np 2 true`, interleaved, N rounds
(default 30) after one warm-up run of each, and prints median, p10, p90 and the ratio of medians.

  --rounds N     rounds to measure (default 30, at least 1)
  --hvdrun PATH  hvdrun to measure (default: build/bin/hvdrun under the repository, else PATH)
  --mpirun PATH  mpirun to compare with (default: mpirun in PATH)
  --json FILE    also write the samples and the statistics to FILE as JSON
EOF
}

die() {
  echo "launch_latency.sh: $*" >&2
  exit 2
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=30
hvdrun=""
mpirun=""
json_file=""

while (($# > 0)); do
  case "$1" in
    --rounds)
      (($# >= 2)) || die "--rounds needs a value"
      rounds="$2"
      shift 2
      ;;
    --rounds=*) rounds="${1#*=}"; shift ;;
    --hvdrun)
      (($# >= 2)) || die "--hvdrun needs a value"
      hvdrun="$2"
      shift 2
      ;;
    --hvdrun=*) hvdrun="${1#*=}"; shift ;;
    --mpirun)
      (($# >= 2)) || die "--mpirun needs a value"
      mpirun="$2"
      shift 2
      ;;
    --mpirun=*) mpirun="${1#*=}"; shift ;;
    --json)
      (($# >= 2)) || die "--json needs a value"
      json_file="$2"
      shift 2
      ;;
    --json=*) json_file="${1#*=}"; shift ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

if [[ ! "$rounds" =~ ^[0-9]+$ ]] || ((10#$rounds < 1)); then
  die "--rounds: expected a whole number >= 1, got '$rounds'"
fi
rounds=$((10#$rounds))

if [[ -z "$hvdrun" ]]; then
  if [[ -x "$repo_root/build/bin/hvdrun" ]]; then
    hvdrun="$repo_root/build/bin/hvdrun"
  else
    hvdrun="$(command -v hvdrun || true)"
  fi
  [[ -n "$hvdrun" ]] || die "no hvdrun: build it into build/bin, put it in PATH, or pass --hvdrun PATH"
fi
[[ -x "$hvdrun" ]] || die "--hvdrun: '$hvdrun' is not an executable file"
if [[ -z "$mpirun" ]]; then
  mpirun="$(command -v mpirun || true)"
  [[ -n "$mpirun" ]] || die "no mpirun in PATH: install openmpi-bin or pass --mpirun PATH"
fi
[[ -x "$mpirun" ]] || die "--mpirun: '$mpirun' is not an executable file"

hvdrun_cmd=("$hvdrun" -np 2 -H localhost:2 true)
# Open MPI refuses to run as root without this flag; --host localhost:2 gives the host two slots
# whatever the core count, so both ranks start on this machine.
mpirun_cmd=("$mpirun")
if ((EUID == 0)); then mpirun_cmd+=(--allow-run-as-root); fi
mpirun_cmd+=(-np 2 --host localhost:2 true)

# Microseconds since the epoch: bash 5's $EPOCHREALTIME costs no process; `date` is the fallback.
# The digits are kept whatever the locale's decimal separator.
now_us() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    local t="${EPOCHREALTIME//[!0-9]/}"
    echo "$((10#$t))"
  else
    local ns
    ns="$(date +%s%N)"
    echo "$((10#$ns / 1000))"
  fi
}

err_log="$(mktemp)"
trap 'rm -f "$err_log"' EXIT

# Runs one command, output discarded, and prints its wall time in microseconds.
time_us() {
  local start end
  start="$(now_us)"
  if ! "$@" >/dev/null 2>"$err_log"; then
    echo "launch_latency.sh: '$*' failed:" >&2
    cat "$err_log" >&2
    exit 1
  fi
  end="$(now_us)"
  echo "$((end - start))"
}

# The p-th percentile (0..100) of sorted microsecond values, interpolated linearly between the two
# nearest samples (numpy's default method), rounded to a microsecond.
percentile() {
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

# Microseconds as milliseconds with one decimal.
ms() {
  local us=$(($1 + 50))
  printf '%d.%d' "$((us / 1000))" "$(((us % 1000) / 100))"
}

hv_samples=()
mpi_samples=()

echo "hvdrun: ${hvdrun_cmd[*]}"
echo "mpirun: ${mpirun_cmd[*]}"
echo "warm-up, then $rounds rounds (order alternates each round)..."
time_us "${hvdrun_cmd[@]}" >/dev/null
time_us "${mpirun_cmd[@]}" >/dev/null
for ((round = 0; round < rounds; ++round)); do
  if ((round % 2 == 0)); then
    hv_samples+=("$(time_us "${hvdrun_cmd[@]}")")
    mpi_samples+=("$(time_us "${mpirun_cmd[@]}")")
  else
    mpi_samples+=("$(time_us "${mpirun_cmd[@]}")")
    hv_samples+=("$(time_us "${hvdrun_cmd[@]}")")
  fi
done

mapfile -t hv_sorted < <(printf '%s\n' "${hv_samples[@]}" | sort -n)
mapfile -t mpi_sorted < <(printf '%s\n' "${mpi_samples[@]}" | sort -n)
hv_p10="$(percentile 10 "${hv_sorted[@]}")"
hv_p50="$(percentile 50 "${hv_sorted[@]}")"
hv_p90="$(percentile 90 "${hv_sorted[@]}")"
mpi_p10="$(percentile 10 "${mpi_sorted[@]}")"
mpi_p50="$(percentile 50 "${mpi_sorted[@]}")"
mpi_p90="$(percentile 90 "${mpi_sorted[@]}")"
# hvdrun / mpirun with two decimals, from the medians.
ratio_x100=$(((hv_p50 * 100 + mpi_p50 / 2) / mpi_p50))
ratio="$(printf '%d.%02d' "$((ratio_x100 / 100))" "$((ratio_x100 % 100))")"

echo
printf '%-8s %10s %10s %10s\n' "" "median ms" "p10 ms" "p90 ms"
printf '%-8s %10s %10s %10s\n' hvdrun "$(ms "$hv_p50")" "$(ms "$hv_p10")" "$(ms "$hv_p90")"
printf '%-8s %10s %10s %10s\n' mpirun "$(ms "$mpi_p50")" "$(ms "$mpi_p10")" "$(ms "$mpi_p90")"
echo "ratio of medians, hvdrun / mpirun: ${ratio}x ($rounds rounds)"

if [[ -n "$json_file" ]]; then
  json_list() {
    local IFS=,
    echo "[$*]"
  }
  json_string() {
    local s="$1"
    s="${s//\\/\\\\}"
    s="${s//\"/\\\"}"
    printf '"%s"' "$s"
  }
  mpirun_version="$("$mpirun" --version 2>/dev/null | head -n 1 || true)"
  hvdrun_version="$("$hvdrun" --version 2>/dev/null | head -n 1 || true)"
  {
    echo "{"
    echo "  \"benchmark\": \"launch_latency\","
    echo "  \"date\": $(json_string "$(date -u +%Y-%m-%dT%H:%M:%SZ)"),"
    echo "  \"rounds\": $rounds,"
    echo "  \"machine\": {\"nproc\": $(nproc), \"kernel\": $(json_string "$(uname -r)")},"
    echo "  \"unit\": \"us\","
    echo "  \"hvdrun\": {\"command\": $(json_string "${hvdrun_cmd[*]}"), \"version\": $(json_string "$hvdrun_version"),"
    echo "             \"median\": $hv_p50, \"p10\": $hv_p10, \"p90\": $hv_p90,"
    echo "             \"samples\": $(json_list "${hv_samples[@]}")},"
    echo "  \"mpirun\": {\"command\": $(json_string "${mpirun_cmd[*]}"), \"version\": $(json_string "$mpirun_version"),"
    echo "             \"median\": $mpi_p50, \"p10\": $mpi_p10, \"p90\": $mpi_p90,"
    echo "             \"samples\": $(json_list "${mpi_samples[@]}")},"
    echo "  \"ratio_of_medians\": $ratio"
    echo "}"
  } >"$json_file"
  echo "wrote $json_file"
fi
