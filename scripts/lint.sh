#!/usr/bin/env bash
# Lint checks registered with CTest (label "lint"); each exits non-zero on any finding.
#   scripts/lint.sh tidy BUILD_DIR CLANG_TIDY   clang-tidy (.clang-tidy) over every source the build compiles
#   scripts/lint.sh format CLANG_FORMAT                        clang-format (.clang-format), no changes made
set -euo pipefail
cd "$(dirname "$0")/.."
source_dirs=()
for dir in common agent launcher runtime examples lab tests; do
  if [ -d "$dir" ]; then source_dirs+=("$dir"); fi
done

case "${1:-}" in
  tidy)
    build_dir=$2 clang_tidy=$3
    # Every source this build compiles: a backend that was not built (no CUDA, no MPI) has no
    # compile command, and is not checked.
    compiled=$(grep -o '"file": "[^"]*"' "$build_dir/compile_commands.json" | sed 's/"file": "//; s/"$//' |
      sort -u)
    sources() {
      find "${source_dirs[@]}" -name '*.cc' "$@" | sort |
        while read -r file; do
          if grep -qxF "$PWD/$file" <<<"$compiled"; then echo "$file"; fi
        done
    }
    # Each file's output is kept apart and only the failing files' findings are printed, together
    # at the end, where a CI log's tail shows them (the "N warnings generated" lines are dropped).
    out_dir=$(mktemp -d)
    trap 'rm -rf "$out_dir"' EXIT
    export clang_tidy build_dir out_dir
    # shellcheck disable=SC2016  # expanded by the bash that xargs starts
    tidy_one='log="$out_dir/$(printf %s "$1" | tr / _).log"
      "$clang_tidy" --quiet -p "$build_dir" "${@:2}" "$1" >"$log" 2>&1 || echo "$1" >>"$out_dir/failed"'
    # The static analyzer runs on the programs' code; tests get every other check, at half the cost.
    sources ! -name '*_test.cc' | xargs -r -P "$(nproc)" -I{} bash -c "$tidy_one" _ {}
    sources -name '*_test.cc' | xargs -r -P "$(nproc)" -I{} bash -c "$tidy_one" _ {} --checks='-clang-analyzer-*'
    if [ -s "$out_dir/failed" ]; then
      echo "clang-tidy: findings in $(wc -l <"$out_dir/failed") file(s):"
      sort "$out_dir/failed" | while read -r file; do
        grep -v ' warnings\? generated\.$' "$out_dir/$(printf %s "$file" | tr / _).log" || true
      done
      exit 1
    fi
    echo "clang-tidy: no findings"
    ;;
  format)
    clang_format=$2
    find "${source_dirs[@]}" \( -name '*.cc' -o -name '*.h' \) | sort |
      xargs "$clang_format" --dry-run --Werror
    ;;
  *)
    echo "usage: scripts/lint.sh tidy BUILD_DIR CLANG_TIDY | format CLANG_FORMAT" >&2
    exit 2
    ;;
esac
