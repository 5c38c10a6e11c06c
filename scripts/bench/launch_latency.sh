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

# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
rounds=30
hvdrun=""
mpirun=""
json_file=""
bench_parse_flags usage rounds=rounds hvdrun=hvdrun mpirun=mpirun json=json_file -- "$@"
bench_whole_number --rounds "$rounds" 1
rounds=$((10#$rounds))

if [[ -z "$hvdrun" ]]; then
  if [[ -x "$repo_root/build/bin/hvdrun" ]]; then
    hvdrun="$repo_root/build/bin/hvdrun"
  else
    hvdrun="$(command -v hvdrun || true)"
  fi
  [[ -n "$hvdrun" ]] || bench_die "no hvdrun: build it into build/bin, put it in PATH, or pass --hvdrun PATH"
fi
[[ -x "$hvdrun" ]] || bench_die "--hvdrun: '$hvdrun' is not an executable file"
if [[ -z "$mpirun" ]]; then
  mpirun="$(command -v mpirun || true)"
  [[ -n "$mpirun" ]] || bench_die "no mpirun in PATH: install openmpi-bin or pass --mpirun PATH"
fi
[[ -x "$mpirun" ]] || bench_die "--mpirun: '$mpirun' is not an executable file"

hvdrun_cmd=("$hvdrun" -np 2 -H localhost:2 true)
# Open MPI refuses to run as root without this flag; --host localhost:2 gives the host two slots
# whatever the core count, so both ranks start on this machine.
mpirun_cmd=("$mpirun")
if ((EUID == 0)); then mpirun_cmd+=(--allow-run-as-root); fi
mpirun_cmd+=(-np 2 --host localhost:2 true)

bench_compare_launches "$rounds"
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
