#!/usr/bin/env bash
# Lint checks registered with CTest (label "lint"); each exits non-zero on any finding.
#   scripts/lint.sh tidy BUILD_DIR CLANG_TIDY   clang-tidy (.clang-tidy) over every source the build compiles
#                                               that changed since it was last found clean
#   scripts/lint.sh format CLANG_FORMAT                        clang-format (.clang-format), no changes made
#   scripts/lint.sh release BUILD_DIR                           the README's demo build (Release) in BUILD_DIR
#                                                               prints no compiler warning
set -euo pipefail
cd "$(dirname "$0")/.."
source_dirs=()
for dir in vocabulary common agent launcher runtime examples lab python tests; do
  if [ -d "$dir" ]; then source_dirs+=("$dir"); fi
done

case "${1:-}" in
  tidy)
    build_dir=$2 clang_tidy=$3
    out_dir=$(mktemp -d)
    trap 'rm -rf "$out_dir"' EXIT
    # Every source this build compiles (a backend that was not built, no CUDA or no MPI, has no
    # compile command and is not checked), each once: clang-tidy checks a file once per command
    # that compiles it, and some are compiled by several targets (the sanitizer tests, the
    # end-to-end tests' helpers). The command kept is one without sanitizers. A file is not checked
    # again while nothing its result depends on changed: scripts/tidy_cache.py keeps the files
    # found clean, keyed by clang-tidy's version, .clang-tidy, the compile command and every file
    # the compiler read for it, in HVDRUN_TIDY_CACHE (default ~/.cache/hvdrun-clang-tidy, beside
    # ccache's; "off" checks every file). The slowest files of the last run start first.
    cache_dir=${HVDRUN_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hvdrun-clang-tidy}
    python3 scripts/tidy_cache.py plan "$build_dir/compile_commands.json" "$PWD" "$out_dir" "$clang_tidy" \
      "$cache_dir" "${source_dirs[@]}"
    # Each file's output is kept apart and only the failing files' findings are printed, together
    # at the end, where a CI log's tail shows them (the "N warnings generated" lines are dropped).
    # A file found clean is kept in the cache at once (a run stopped halfway keeps what it checked);
    # each file's time and result go to $out_dir/done, for the next run's order and the slowest.
    export clang_tidy out_dir cache_dir
    # shellcheck disable=SC2016  # expanded by the bash that xargs starts
    tidy_one='read -r file key checks <<<"$1"
      log="$out_dir/$(printf %s "$file" | tr / _).log"
      args=()
      if [ "$checks" != - ]; then args=("$checks"); fi
      start=$(date +%s%N) status=0
      "$clang_tidy" --quiet -p "$out_dir" "${args[@]}" "$file" >"$log" 2>&1 || status=$?
      if [ "$status" -ne 0 ]; then
        echo "$file" >>"$out_dir/failed"
      elif [ "$key" != - ] && [ "$cache_dir" != off ]; then
        mkdir -p "$cache_dir/clean/${key:0:2}" && : >"$cache_dir/clean/${key:0:2}/$key"
      fi
      ms=$((($(date +%s%N) - start) / 1000000))
      printf "%s\t%s\t%d.%03d\t%s\n" "$file" "$key" $((ms / 1000)) $((ms % 1000)) "$status" >>"$out_dir/done"'
    xargs -r -d '\n' -P "$(nproc)" -I{} bash -c "$tidy_one" _ {} <"$out_dir/sources"
    python3 scripts/tidy_cache.py record "$out_dir" "$cache_dir"
    if [ -s "$out_dir/failed" ]; then
      echo "clang-tidy: findings in $(wc -l <"$out_dir/failed") file(s):"
      sort "$out_dir/failed" | while read -r file; do
        grep -v ' warnings\? generated\.$' "$out_dir/$(printf %s "$file" | tr / _).log" || true
      done
      exit 1
    fi
    echo "clang-tidy: no findings ($(wc -l <"$out_dir/sources") files checked)"
    ;;
  format)
    clang_format=$2
    find "${source_dirs[@]}" \( -name '*.cc' -o -name '*.h' \) | sort |
      xargs "$clang_format" --dry-run --Werror
    ;;
  release)
    # CI's own build is Debian's (None, -O2); the demo's is Release (-O3), where GCC warns of things
    # that -O2 never looks at (-Wrestrict's false positives, for one). quickstart.sh release-check
    # builds the demo's objects with -Werror; the log is searched too, because ccache replays the
    # warnings of an object it compiled earlier without -Werror and then succeeds.
    build_dir=$2
    log=$build_dir.log
    mkdir -p "$(dirname "$build_dir")"
    if ! BUILD_DIR=$build_dir bash scripts/quickstart.sh release-check >"$log" 2>&1; then
      tail -n 60 "$log"
      echo "release build: failed ($log)"
      exit 1
    fi
    if grep -n -B2 -A6 'warning:' "$log"; then
      echo "release build: the demo's build prints the compiler warnings above ($log)"
      exit 1
    fi
    echo "release build: no compiler warning ($(grep -c 'Building' "$log") steps compiled or taken from ccache)"
    ;;
  *)
    echo "usage: scripts/lint.sh tidy BUILD_DIR CLANG_TIDY | format CLANG_FORMAT | release BUILD_DIR" >&2
    exit 2
    ;;
esac
