#!/usr/bin/env bash
# Lint checks registered with CTest (label "lint"); each exits non-zero on any finding.
#   scripts/lint.sh tidy BUILD_DIR CLANG_TIDY   clang-tidy (.clang-tidy) over every source the build compiles
#   scripts/lint.sh format CLANG_FORMAT                        clang-format (.clang-format), no changes made
set -euo pipefail
cd "$(dirname "$0")/.."
source_dirs=()
for dir in common agent launcher runtime bench trainer lab tests; do
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
    # The static analyzer runs on the programs' code; tests get every other check, at half the cost.
    sources ! -name '*_test.cc' | xargs -r -P "$(nproc)" -n 1 "$clang_tidy" --quiet -p "$build_dir"
    sources -name '*_test.cc' |
      xargs -r -P "$(nproc)" -n 1 "$clang_tidy" --quiet -p "$build_dir" --checks='-clang-analyzer-*' 
    ;;
  format)
    clang_format=$2
    find "${source_dirs[@]}" fuzz \( -name '*.cc' -o -name '*.h' \) | sort |
      xargs "$clang_format" --dry-run --Werror
    ;;
  *)
    echo "usage: scripts/lint.sh tidy BUILD_DIR CLANG_TIDY | format CLANG_FORMAT" >&2
    exit 2
    ;;
esac
