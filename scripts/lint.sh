#!/usr/bin/env bash
# Lint checks registered with CTest (label "lint"); each exits non-zero on any finding.
#   scripts/lint.sh tidy BUILD_DIR CLANG_TIDY   clang-tidy (.clang-tidy) over every source the build compiles
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
    # end-to-end tests' helpers). The command kept is one without sanitizers.
    python3 - "$build_dir/compile_commands.json" "$PWD" "$out_dir" "${source_dirs[@]}" <<'PYTHON'
import json, os, sys
database, root, out_dir, dirs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
chosen = {}
for entry in json.load(open(database)):
    path = os.path.relpath(os.path.join(entry["directory"], entry["file"]), root)
    if path.split("/")[0] not in dirs or not path.endswith(".cc"):
        continue
    if path not in chosen or ("-fsanitize" in chosen[path]["command"] and "-fsanitize" not in entry["command"]):
        chosen[path] = entry
json.dump(list(chosen.values()), open(os.path.join(out_dir, "compile_commands.json"), "w"), indent=1)
# Programs' code first, then tests (cheaper: no static analyzer), each in file order.
with open(os.path.join(out_dir, "sources"), "w") as sources:
    for path in sorted(chosen, key=lambda p: (p.endswith("_test.cc"), p)):
        sources.write(path + "\n")
PYTHON
    # Each file's output is kept apart and only the failing files' findings are printed, together
    # at the end, where a CI log's tail shows them (the "N warnings generated" lines are dropped).
    # The static analyzer runs on the programs' code; tests get every other check, at half the cost.
    export clang_tidy out_dir
    # shellcheck disable=SC2016  # expanded by the bash that xargs starts
    tidy_one='log="$out_dir/$(printf %s "$1" | tr / _).log"
      checks=()
      case "$1" in *_test.cc) checks=("--checks=-clang-analyzer-*") ;; esac
      "$clang_tidy" --quiet -p "$out_dir" "${checks[@]}" "$1" >"$log" 2>&1 || echo "$1" >>"$out_dir/failed"'
    xargs -r -P "$(nproc)" -I{} bash -c "$tidy_one" _ {} <"$out_dir/sources"
    if [ -s "$out_dir/failed" ]; then
      echo "clang-tidy: findings in $(wc -l <"$out_dir/failed") file(s):"
      sort "$out_dir/failed" | while read -r file; do
        grep -v ' warnings\? generated\.$' "$out_dir/$(printf %s "$file" | tr / _).log" || true
      done
      exit 1
    fi
    echo "clang-tidy: no findings ($(wc -l <"$out_dir/sources") files)"
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
