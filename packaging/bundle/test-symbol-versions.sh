#!/usr/bin/env bash
# The test of packaging/bundle/symbol-versions.sh (CTest "bundle_symbol_versions", label package; a
# second, no root), on copies of two of this machine's libraries laid out as a bundle: libz.so.1
# (it needs glibc alone) and libstdc++.so.6 (it defines GLIBCXX_ versions, which are not needs).
# What each file needs is read here with objdump -T, not readelf as the script reads it.
#
#   bash packaging/bundle/test-symbol-versions.sh
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/symbol-versions.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "test-symbol-versions: $*" >&2
  exit 1
}
library() { ldconfig -p | awk -v name="$1" '$1 == name && /x86-64/ { print $NF; exit }'; }
mkdir -p "$work/bundle/lib" "$work/bundle/share"
cp -L "$(library libz.so.1)" "$(library libstdc++.so.6)" "$work/bundle/lib/"
echo "not an ELF file" >"$work/bundle/share/README"
# The highest GLIBC_ version of the symbols a file takes from elsewhere (objdump -T's *UND*).
needed_glibc() {
  objdump -T "$1" | awk '/\*UND\*/' | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n1
}
zlib_glibc=$(needed_glibc "$work/bundle/lib/libz.so.1")
stdcxx_glibc=$(needed_glibc "$work/bundle/lib/libstdc++.so.6")
if [ -z "$zlib_glibc" ] || [ -z "$stdcxx_glibc" ]; then fail "objdump -T shows no GLIBC_ version needed"; fi
top=$(printf '%s\n' "$zlib_glibc" "$stdcxx_glibc" | sort -V | tail -n1)
baseline() { # baseline FILE GLIBC: a baseline file, the GCC runtime's versions left high
  printf 'HVDRUN_BASELINE_GLIBC=%s\nHVDRUN_BASELINE_GLIBCXX=3.4.99\nHVDRUN_BASELINE_CXXABI=1.3.99\nHVDRUN_BASELINE_GCC=99\n' \
    "$2" >"$1"
}

# At the baseline: exit 0; a row per ELF file, none for the README; the file's own GLIBCXX_
# definitions are not counted as needs.
baseline "$work/at.env" "$top"
bash "$check" --baseline "$work/at.env" "$work/bundle" >"$work/at.out" || fail "exit $? at the baseline: $(cat "$work/at.out")"
grep -Eq "^lib/libz\.so\.1 +$zlib_glibc +- +- +- *$" "$work/at.out" || fail "no row 'lib/libz.so.1 $zlib_glibc - - -' in: $(cat "$work/at.out")"
grep -Eq "^lib/libstdc\+\+\.so\.6 +$stdcxx_glibc +- +- " "$work/at.out" ||
  fail "no row 'lib/libstdc++.so.6 $stdcxx_glibc - -' in: $(cat "$work/at.out")"
grep -Eq "^highest \(2 ELF files\) +$top " "$work/at.out" || fail "no 'highest (2 ELF files) $top' in: $(cat "$work/at.out")"
! grep -q README "$work/at.out" || fail "share/README is not an ELF file: $(cat "$work/at.out")"

# Below what libstdc++ needs: exit 6, naming that file and the version, not libz.
baseline "$work/below.env" "$zlib_glibc"
status=0
bash "$check" --baseline "$work/below.env" "$work/bundle" >/dev/null 2>"$work/below.err" || status=$?
[ "$status" -eq 6 ] || fail "exit $status below the baseline, not 6"
grep -qF "lib/libstdc++.so.6 needs GLIBC_$stdcxx_glibc" "$work/below.err" || fail "no line for libstdc++: $(cat "$work/below.err")"
! grep -q libz "$work/below.err" || fail "libz is within the baseline: $(cat "$work/below.err")"

# The tarball gives what its directory gives.
tar -C "$work" -czf "$work/bundle.tar.gz" bundle
status=0
bash "$check" --baseline "$work/below.env" "$work/bundle.tar.gz" >/dev/null 2>&1 || status=$?
[ "$status" -eq 6 ] || fail "exit $status on the tarball, not 6"
bash "$check" --baseline "$work/at.env" "$work/bundle.tar.gz" >"$work/tarball.out" || fail "exit $? on the tarball at the baseline"
diff "$work/at.out" "$work/tarball.out" >&2 || fail "the tarball's table differs from its directory's"

# Bad input: a baseline that is no version (1), no bundle (2).
printf 'HVDRUN_BASELINE_GLIBC=new\n' >"$work/bad.env"
status=0
bash "$check" --baseline "$work/bad.env" "$work/bundle" >/dev/null 2>"$work/bad.err" || status=$?
if [ "$status" -ne 1 ] || ! grep -q 'HVDRUN_BASELINE_GLIBC is not a version' "$work/bad.err"; then
  fail "a bad baseline: exit $status, $(cat "$work/bad.err")"
fi
status=0
bash "$check" >/dev/null 2>&1 || status=$?
[ "$status" -eq 2 ] || fail "no arguments: exit $status, not 2"
echo "test-symbol-versions: passed (libz needs GLIBC_$zlib_glibc, libstdc++ GLIBC_$stdcxx_glibc)"
