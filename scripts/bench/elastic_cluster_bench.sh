#!/usr/bin/env bash
# Elastic jobs on the test cluster (docs/elastic.md, docs/testing-cluster.md; as root): the time
# from a host's failure to the end of the first step of the job's next round, when the host's link
# is cut, beside the same when its hvdrun-agent is SIGKILLed (its rank dies with it, so the
# survivors see their connections close at once: the baseline). Each is one run of its CTest test
# (tests/cluster/elastic_cluster_e2e_test.cc: 3 hosts, --min-np 2, --heartbeat-timeout 3, the
# hvd.elastic program tests/python/elastic_recovery.py), which prints the time; the two alternate,
# ROUNDS of each. Prints the median and every round's time of each, and the load average.
#
# It asserts nothing about the times: the machine is shared. See docs/benchmarks.md for the recorded
# results.
#
# Usage: scripts/bench/elastic_cluster_bench.sh [--rounds N] [--build DIR]
#   --build DIR  a test build tree with bin/hvdrun_elastic_cluster_tests, staged
#                (ctest --test-dir DIR -R install_for_e2e) (default build)
set -euo pipefail

rounds=5
# shellcheck source=scripts/bench/bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
bench_parse_flags 2,15p rounds=rounds build=build -- "$@"
bench_whole_number --rounds "$rounds" 1
bench_build_with hvdrun_elastic_cluster_tests
((EUID == 0)) || bench_die "needs root (network namespaces)"

declare -A filter=([agent]='*AgentIsKilled*' [cut]='*LinkIsCut*')
declare -A seconds=([agent]='' [cut]='')
for ((round = 1; round <= rounds; ++round)); do
  order=(agent cut)
  ((round % 2 == 0)) && order=(cut agent)
  for kind in "${order[@]}"; do
    log="$("$build/bin/hvdrun_elastic_cluster_tests" --gtest_filter="${filter[$kind]}" 2>&1)" ||
      { echo "$log" | tail -20; bench_die "the $kind run failed"; }
    value="$(echo "$log" | sed -n 's/^elastic: .* to the first step of round 1: \([0-9.]*\) s .*/\1/p')"
    [[ -n "$value" ]] || bench_die "the $kind run printed no time"
    seconds[$kind]+="$value "
  done
  echo "round $round/$rounds done" >&2
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| failure (--heartbeat-timeout 3) | to the first step of round 1: median (s) | rounds (s) |"
echo "|---|---|---|"
echo "| an agent SIGKILLed (baseline) | $(echo "${seconds[agent]}" | median) | ${seconds[agent]}|"
echo "| a link cut | $(echo "${seconds[cut]}" | median) | ${seconds[cut]}|"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
