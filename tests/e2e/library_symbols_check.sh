#!/usr/bin/env bash
# libhvdrun's libraries as installed (CTest test library_symbols, label integration):
#
#   bash tests/e2e/library_symbols_check.sh LIBDIR BACKEND...
#
# - LIBDIR/libhvdrun.so imports and exports no gloo:: symbol (its dynamic symbol table, read with
#   nm -D), and needs none of the backends' libraries (no NEEDED libgloo, libmpi, libnccl, libcudart):
#   it loads beside any other Gloo, and on a machine without Open MPI or NCCL;
# - LIBDIR/hvdrun/backends/ holds libhvdrun-BACKEND.so for each BACKEND given, and nothing else, and
#   each module exports its entry point, hvdrun_backend_module_v1, and nothing else.
# Prints every violation and exits 1 if there is any.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: library_symbols_check.sh LIBDIR BACKEND..." >&2
  exit 2
fi
libdir=$1
shift
failed=0
fail() {
  echo "library_symbols_check: $*" >&2
  failed=1
}

lib=$libdir/libhvdrun.so
[ -e "$lib" ] || { fail "$lib: not found"; exit 1; }
while read -r needed; do
  case $needed in
    libgloo* | libmpi* | libnccl* | libcudart*) fail "$lib needs $needed: that library belongs in a backend module" ;;
  esac
done < <(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
gloo_symbols=$(nm -D --with-symbol-versions -C "$lib" | grep 'gloo::' || true)
if [ -n "$gloo_symbols" ]; then
  fail "$lib imports (U) or exports gloo:: symbols:"
  echo "$gloo_symbols" >&2
fi

modules=$libdir/hvdrun/backends
expected=()
for backend in "$@"; do
  module=$modules/libhvdrun-$backend.so
  expected+=("$module")
  if [ ! -f "$module" ]; then
    fail "$module: not found"
    continue
  fi
  exported=$(nm -D --defined-only --with-symbol-versions "$module" | awk '{print $3}')
  if [ "$exported" != hvdrun_backend_module_v1 ]; then
    fail "$module exports other symbols than hvdrun_backend_module_v1 alone:"
    echo "$exported" >&2
  fi
done
for file in "$modules"/*; do
  [ -e "$file" ] || continue
  case " ${expected[*]} " in
    *" $file "*) ;;
    *) fail "$file: not a module of a backend built (${*})" ;;
  esac
done
exit "$failed"
