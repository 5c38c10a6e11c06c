# shellcheck shell=bash
# The bundle's ELF files and the libraries they need: sourced by packaging/bundle/build-bundle.sh
# (bash, set -euo pipefail). Every function takes the bundle's directory (STAGE) and treats every
# ELF file under it alike, wherever it lies: programs in bin/, libraries in lib/, backend modules
# in lib/hvdrun/backends/.
#
#   bundle_gather_libraries STAGE RECORD [SONAME...]
#       copies into STAGE/lib, under its SONAME, every library an ELF file needs (DT_NEEDED, through
#       the libraries copied, recursively) that is neither the base system's nor the machine's own,
#       and each SONAME named (found through ldconfig); RECORD gets one line a library:
#       "carried SONAME SOURCE_PATH NEEDED_BY", and one a file needing a machine's own library:
#       "machine FILE SONAME". Exit 3 when a library is not found here.
#   bundle_set_runpaths STAGE
#       sets each ELF file's RUNPATH to STAGE/lib relative to the file's own directory ($ORIGIN,
#       $ORIGIN/../lib, $ORIGIN/../..): the dynamic linker finds them wherever STAGE is moved.
#   bundle_check_closure STAGE
#       every library each file needs resolves, without LD_LIBRARY_PATH, into STAGE/lib, or is the
#       base system's, or is the machine's own and needed only by a backend module (lib/hvdrun/) or a
#       program that runs for one backend alone (libexec/: hvdrun-nccl-tests), never by what every
#       job loads (bin/, lib/); one line on stderr per file and library that does not, then exit 3
#       (a library outside the bundle) or 4 (a machine's own library needed by a program in bin/ or a
#       library in lib/).
#   bundle_licenses RECORD HEADERS DOC
#       DOC/licenses/: the copyright file of each Debian package a carried library or header (the
#       paths in HEADERS, one a line) comes from, the license files beside the others, and
#       DOC/licenses/README with where each came from.

# base: glibc's libraries, libstdc++ and libgcc_s, which every Linux machine has (with at least the
# symbol versions of packaging/bundle/baseline.env, which symbol-versions.sh checks file by file). machine: the machine's own,
# never carried: Open MPI's libraries (its mpirun and plugins must match them), NCCL (hvdrun-setup
# links the one the machine's torch loads: two NCCLs in one process do not mix) and the driver's.
bundle_library_class() {
  case $1 in
    ld-linux*.so* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.* | \
      libutil.so.* | libresolv.so.* | libanl.so.* | libstdc++.so.* | libgcc_s.so.*)
      echo base
      ;;
    libmpi.so.* | libmpi_*.so.* | libopen-rte.so.* | libopen-pal.so.* | libnccl.so.* | libcuda.so.* | \
      libnvidia-*.so.*)
      echo machine
      ;;
    *) echo carried ;;
  esac
}

bundle_elf_files() {
  local file
  find "$1" -type f -print0 | sort -z | while IFS= read -r -d '' file; do
    if [ "$(head -c 4 "$file" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; then echo "$file"; fi
  done
}

bundle_needed() {
  readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

# bundle_resolved LDD_OUTPUT SONAME: the path ldd found SONAME at, empty when not found.
bundle_resolved() {
  awk -v name="$2" '$1 == name && $2 == "=>" && $3 != "not" { print $3; exit }' <<<"$1"
}

bundle_gather_libraries() {
  local stage=$1 record=$2 file name path ldd_output i=0
  shift 2
  : >"$record"
  local queue=()
  mapfile -t queue < <(bundle_elf_files "$stage")
  for name in "$@"; do
    [ -e "$stage/lib/$name" ] && continue
    path=$(ldconfig -p | awk -v name="$name" '$1 == name && /x86-64/ && !found { print $NF; found = 1 }')
    if [ -z "$path" ]; then
      echo "build-bundle: $name (for hvdrun-setup's builds) not found by ldconfig" >&2
      exit 3
    fi
    cp -L "$path" "$stage/lib/$name"
    chmod 644 "$stage/lib/$name"
    echo "carried $name $(readlink -f "$path") hvdrun-setup" >>"$record"
    queue+=("$stage/lib/$name")
  done
  while [ "$i" -lt "${#queue[@]}" ]; do
    file=${queue[$i]}
    i=$((i + 1))
    ldd_output=$(ldd "$file" 2>/dev/null || true)
    for name in $(bundle_needed "$file"); do
      case $(bundle_library_class "$name") in
        base) continue ;;
        machine)
          echo "machine ${file#"$stage"/} $name" >>"$record"
          continue
          ;;
      esac
      [ -e "$stage/lib/$name" ] && continue
      path=$(bundle_resolved "$ldd_output" "$name")
      if [ -z "$path" ]; then
        echo "build-bundle: ${file#"$stage"/} needs $name, which is not found here" >&2
        exit 3
      fi
      cp -L "$path" "$stage/lib/$name"
      chmod 644 "$stage/lib/$name"
      echo "carried $name $(readlink -f "$path") ${file#"$stage"/}" >>"$record"
      queue+=("$stage/lib/$name")
    done
  done
}

bundle_set_runpaths() {
  local stage=$1 file relative
  while IFS= read -r file; do
    relative=$(realpath --relative-to="$(dirname "$file")" "$stage/lib")
    if [ "$relative" = . ]; then
      # shellcheck disable=SC2016  # $ORIGIN is the dynamic linker's
      patchelf --set-rpath '$ORIGIN' "$file"
    else
      patchelf --set-rpath "\$ORIGIN/$relative" "$file"
    fi
  done < <(bundle_elf_files "$stage")
}

bundle_check_closure() {
  local stage=$1 file name path ldd_output relative status=0
  local lib_dir
  lib_dir=$(realpath "$stage/lib")
  while IFS= read -r file; do
    relative=${file#"$stage"/}
    ldd_output=$(env -u LD_LIBRARY_PATH ldd "$file" 2>/dev/null || true)
    for name in $(bundle_needed "$file"); do
      case $(bundle_library_class "$name") in
        base) ;;
        machine)
          case $relative in
            lib/hvdrun/* | libexec/*) ;;
            *)
              echo "build-bundle: $relative needs $name, the machine's own library, which only a backend module (lib/hvdrun/backends/) or a program in libexec/ may: every job loads $relative (HVDRUN_BUNDLE_CMAKE_ARGS=-DHVDRUN_WITH_<NAME>=OFF leaves that backend out)" >&2
              [ "$status" -ne 0 ] || status=4
              ;;
          esac
          ;;
        carried)
          path=$(bundle_resolved "$ldd_output" "$name")
          if [ -z "$path" ] || [ "$(dirname "$(realpath -m "$path")")" != "$lib_dir" ]; then
            echo "build-bundle: $relative needs $name, found ${path:-nowhere}, not in the bundle's lib/" >&2
            status=3
          fi
          ;;
      esac
    done
  done < <(bundle_elf_files "$stage")
  if [ "$status" -ne 0 ]; then exit "$status"; fi
}

# bundle_debian_package PATH: the Debian package that installed PATH (with /usr or without: bookworm
# records some libraries under /lib), empty when none did.
bundle_debian_package() {
  local path=$1 package
  for candidate in "$path" "${path#/usr}"; do
    package=$(dpkg-query -S "$candidate" 2>/dev/null | head -n1 | cut -d: -f1) || true
    if [ -n "$package" ]; then
      echo "$package"
      return
    fi
  done
}

# bundle_license_beside PATH: the license file of a file no Debian package installed, empty if none.
bundle_license_beside() {
  local path=$1 dir record license=""
  dir=$(dirname "$path")
  while [ "$dir" != / ] && [ -z "$license" ]; do
    for record in "$dir"/dist-info/*/RECORD "$dir"/*.dist-info/RECORD; do
      if [ -f "$record" ] && grep -q "/$(basename "$path")," "$record"; then
        license=$(find "$(dirname "$record")" -type f \( -iname 'licen[cs]e*' -o -iname 'eula*' \) | sort | sed -n 1p)
        break
      fi
    done
    if [ -z "$license" ]; then
      license=$(find "$dir" -maxdepth 1 -type f \( -iname 'licen[cs]e*' -o -iname 'eula*' \) | sort | sed -n 1p)
    fi
    dir=$(dirname "$dir")
  done
  echo "$license"
}

bundle_licenses() {
  local record=$1 headers=$2 doc=$3 path package what license
  mkdir -p "$doc/licenses"
  local readme=$doc/licenses/README
  {
    echo "What the bundle carries besides hvdrun, where it came from, and its license file here."
    echo
  } >"$readme"
  {
    awk '$1 == "carried" { print $3 " " $2 }' "$record"
    awk '{ print $1 " " $1 }' "$headers"
  } | while read -r path what; do
    package=$(bundle_debian_package "$path")
    if [ -n "$package" ]; then
      cp "/usr/share/doc/$package/copyright" "$doc/licenses/$package.copyright"
      echo "$what: Debian package $package $(dpkg-query -W -f='${Version}' "$package" 2>/dev/null), $package.copyright" >>"$readme"
      continue
    fi
    # Not from a package (the CUDA toolkit's libcudart): the license of the Python wheel whose
    # RECORD names it (a toolkit installed from NVIDIA's wheels), else the license file nearest above.
    license=$(bundle_license_beside "$path")
    if [ -n "$license" ]; then
      cp "$license" "$doc/licenses/$(basename "$what").$(basename "$license")"
      echo "$what: $path, $(basename "$what").$(basename "$license") (from $license)" >>"$readme"
    else
      echo "$what: $path (no license file found beside it)" >>"$readme"
    fi
  done
  cp "$(dirname "${BASH_SOURCE[0]}")/../debian/copyright" "$doc/licenses/hvdrun.copyright"
}
