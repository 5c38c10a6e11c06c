#!/usr/bin/env bash
# The glibc and GCC runtime versions each ELF file of the relocatable bundle needs, against the
# bundle's stated baseline (packaging/bundle/baseline.env):
#
#   bash packaging/bundle/symbol-versions.sh [--baseline FILE] BUNDLE_DIR|BUNDLE.tar.gz
#
# For every ELF file (programs, libhvdrun, backend modules, the libraries the bundle carries), one
# line: its path in the bundle and the highest symbol version it needs of the base system's
# libraries, which the bundle never carries (packaging/bundle/elf-files.sh, "base"): GLIBC_ (glibc:
# libc, libm, libpthread, ld-linux...), GLIBCXX_ and CXXABI_ (libstdc++), GCC_ (libgcc_s). They are
# read from each file's version needs (.gnu.version_r, readelf --version-info): what the dynamic
# linker checks when it loads the file, and refuses with "version `GLIBC_2.34' not found" when the
# machine's library lacks it. A "-" is a library the file does not need. Then the highest of all,
# and the baseline.
#
# Exit status: 0 every file within the baseline; 1 a missing tool or an unreadable bundle or
# baseline; 2 bad arguments; 6 a file needs a version above the baseline (one line each on stderr,
# naming the file, the version and the oldest GCC or distribution that has it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
baseline=$here/baseline.env
usage="usage: symbol-versions.sh [--baseline FILE] BUNDLE_DIR|BUNDLE.tar.gz"
while [ $# -gt 0 ]; do
  case $1 in
    --baseline)
      [ $# -ge 2 ] || { echo "symbol-versions: --baseline needs a file; $usage" >&2; exit 2; }
      baseline=$2
      shift 2
      ;;
    -h | --help)
      echo "$usage"
      exit 0
      ;;
    -*)
      echo "symbol-versions: unknown option $1; $usage" >&2
      exit 2
      ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { echo "symbol-versions: one bundle directory or tarball; $usage" >&2; exit 2; }
bundle=$1
for tool in readelf od sort; do
  command -v "$tool" >/dev/null || { echo "symbol-versions: $tool not found: run scripts/install-deps.sh" >&2; exit 1; }
done
[ -f "$baseline" ] || { echo "symbol-versions: $baseline: no such baseline file" >&2; exit 1; }
# shellcheck source=packaging/bundle/baseline.env
. "$baseline"
for name in GLIBC GLIBCXX CXXABI GCC; do
  variable=HVDRUN_BASELINE_$name
  if ! [[ ${!variable:-} =~ ^[0-9]+(\.[0-9]+)*$ ]]; then
    echo "symbol-versions: $baseline: $variable is not a version (e.g. 2.31)" >&2
    exit 1
  fi
done

if [ -f "$bundle" ]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  tar -C "$scratch" -xzf "$bundle" || { echo "symbol-versions: $bundle: not a readable tarball" >&2; exit 1; }
  # The bundle's tarball holds one directory (hvdrun-VERSION-linux-ARCH): paths below it, as in a directory.
  mapfile -t top_entries < <(find "$scratch" -mindepth 1 -maxdepth 1)
  if [ "${#top_entries[@]}" -eq 1 ] && [ -d "${top_entries[0]}" ]; then bundle=${top_entries[0]}; else bundle=$scratch; fi
elif [ ! -d "$bundle" ]; then
  echo "symbol-versions: $bundle: no such directory or tarball" >&2
  exit 1
fi

# What has each version first, for the messages: GCC releases (libstdc++, libgcc_s) and the
# distributions of the servers the bundle is for (glibc).
known_as() { # known_as PREFIX VERSION
  case $1_$2 in
    GLIBC_2.28) echo "Debian 10, RHEL 8" ;;
    GLIBC_2.31) echo "Ubuntu 20.04, Debian 11" ;;
    GLIBC_2.34) echo "RHEL/Rocky 9" ;;
    GLIBC_2.35) echo "Ubuntu 22.04" ;;
    GLIBC_2.36) echo "Debian 12" ;;
    GLIBC_2.39) echo "Ubuntu 24.04" ;;
    GLIBCXX_3.4.25 | CXXABI_1.3.11) echo "GCC 8" ;;
    GLIBCXX_3.4.26 | CXXABI_1.3.12) echo "GCC 9" ;;
    GLIBCXX_3.4.28) echo "GCC 10" ;;
    GLIBCXX_3.4.29 | CXXABI_1.3.13) echo "GCC 11" ;;
    GLIBCXX_3.4.30) echo "GCC 12" ;;
    GLIBCXX_3.4.31 | CXXABI_1.3.14) echo "GCC 13" ;;
    GLIBCXX_3.4.32 | CXXABI_1.3.15) echo "GCC 14" ;;
    GCC_*) echo "GCC ${2%%.*}" ;;
    *) echo "" ;;
  esac
}
# highest VERSION...: the highest by version order, "-" when none.
highest() {
  if [ $# -eq 0 ]; then echo -; else printf '%s\n' "$@" | sort -V | tail -n1; fi
}
above() { # above VERSION BASELINE: VERSION is higher than BASELINE
  [ "$1" != - ] && [ "$1" != "$2" ] && [ "$(highest "$1" "$2")" = "$1" ]
}

# The version needs of one file, as "PREFIX VERSION" lines (GLIBC 2.34, GLIBCXX 3.4.30, ...).
needs() {
  LC_ALL=C readelf --version-info --wide "$1" 2>/dev/null |
    sed -n 's/.*Name: \(GLIBC\|GLIBCXX\|CXXABI\|GCC\)_\([0-9][0-9.]*\) .*/\1 \2/p'
}

printf '%-52s %-8s %-8s %-8s %s\n' "file" GLIBC GLIBCXX CXXABI GCC
declare -A top=([GLIBC]=- [GLIBCXX]=- [CXXABI]=- [GCC]=-)
status=0
count=0
while IFS= read -r -d '' file; do
  [ "$(head -c 4 "$file" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] || continue
  count=$((count + 1))
  relative=${file#"$bundle"/}
  line=$(needs "$file")
  row=()
  for name in GLIBC GLIBCXX CXXABI GCC; do
    mapfile -t versions < <(awk -v name="$name" '$1 == name { print $2 }' <<<"$line")
    version=$(highest "${versions[@]}")
    row+=("$version")
    [ "$version" = - ] || top[$name]=$(highest "$version" "${top[$name]/-/0}")
    variable=HVDRUN_BASELINE_$name
    if above "$version" "${!variable}"; then
      has=$(known_as "$name" "$version")
      echo "symbol-versions: $relative needs ${name}_$version${has:+ ($has)}, above the baseline ${name}_${!variable} ($baseline)" >&2
      status=6
    fi
  done
  printf '%-52s %-8s %-8s %-8s %s\n' "$relative" "${row[@]}"
done < <(find "$bundle" -type f -print0 | sort -z)
if [ "$count" -eq 0 ]; then
  echo "symbol-versions: $1: no ELF file in it" >&2
  exit 1
fi
printf '%-52s %-8s %-8s %-8s %s\n' "highest ($count ELF files)" "${top[GLIBC]}" "${top[GLIBCXX]}" \
  "${top[CXXABI]}" "${top[GCC]}"
printf '%-52s %-8s %-8s %-8s %s\n' "baseline ($(basename "$baseline"))" "$HVDRUN_BASELINE_GLIBC" \
  "$HVDRUN_BASELINE_GLIBCXX" "$HVDRUN_BASELINE_CXXABI" "$HVDRUN_BASELINE_GCC"
exit "$status"
