# shellcheck shell=bash
# A clean root of this machine's Debian release, and namespaces to run things in it: sourced by
# the tests that install hvdrun as a user's machine would, packaging/test-debs.sh (the .debs) and
# packaging/bundle/test-bundle.sh (the relocatable bundle). Bash, set -euo pipefail, as root.
#
#   clean_root_skip_unless_root NAME WHY
#                                unless run as root, says "NAME: skipped: needs root (WHY)" and exits
#                                77 (the tests' CTest SKIP_RETURN_CODE)
#   clean_root_require NAME TOOL...
#                                exits 1, naming scripts/install-deps.sh, unless each TOOL is in PATH
#   clean_root_init NAME WORK [SCRATCH...]
#                                log prefix NAME; the root is WORK/root. Removes WORK/root and each
#                                SCRATCH directory, and sets the EXIT trap that kills the running
#                                namespace (by its PID) and removes them again (none left under a
#                                mount); sets codename (this machine's release, or
#                                $clean_root_codename where the caller set it), mirror, sources
#                                (sources.list lines) and extra_repos (piuparts' --extra-repo flags)
#                                from this machine's apt.
#   step MESSAGE                 prints "NAME: [S s] MESSAGE", S the seconds since clean_root_init
#   clean_root_make              WORK/root: debootstrap --variant=minbase with eatmydata. The first
#                                test of the day debootstraps and keeps a tarball of the root in
#                                $HVDRUN_CLEAN_ROOT_CACHE (default WORK/../clean-root-cache); the
#                                others, and the same test again, unpack it (seconds instead of a
#                                minute). A lock makes a second test wait for the first's tarball.
#   clean_root_configure         what every installed machine has and a debootstrapped root lacks:
#                                the apt sources, a resolver, /etc/hosts.
#   in_namespaces LIMIT CMD...   CMD in mount and PID namespaces of its own, killed after LIMIT
#   in_root LIMIT <<SCRIPT       a bash script (stdin) run as root in WORK/root, with /proc, /sys
#                                (read-only: Open MPI's hwloc reads the CPU topology there) and a
#                                /dev/shm (Open MPI's shared memory) of its own, an empty environment
#                                but PATH, HOME, LANG and DEBIAN_FRONTEND, and bash -euo pipefail.
#                                Each rw:DIR or ro:DIR of the array clean_root_binds (set by the
#                                caller; empty by default) is this machine's DIR, bound at the same
#                                path in the root (ro: read-only) for the script's time.
#
# Everything that runs in the root runs in mount and PID namespaces of its own (unshare): /proc and
# every other mount made there vanish with it, and killing the one unshare process, by its PID,
# ends every process started there, also when the test fails or is interrupted.

clean_root_skip_unless_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "$1: skipped: needs root ($2)"
    exit 77
  fi
}

clean_root_require() {
  local name=$1 tool
  shift
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null; then
      echo "$name: $tool not found: run scripts/install-deps.sh" >&2
      exit 1
    fi
  done
}

clean_root_init() {
  clean_root_start=$SECONDS
  clean_root_name=$1
  clean_root_work=$2
  clean_root=$clean_root_work/root
  clean_root_ns_pid=""
  clean_root_scratch=("${@:3}")
  clean_root_binds=()
  clean_root_require "$clean_root_name" debootstrap unshare flock
  trap clean_root_cleanup EXIT
  trap 'exit 130' INT TERM
  clean_root_find_sources
  mkdir -p "$clean_root_work"
  clean_root_remove_scratch
}

step() { echo "$clean_root_name: [$((SECONDS - clean_root_start)) s] $*"; }

# The namespace that is running (by PID), then the scratch directories.
clean_root_cleanup() {
  if [ -n "$clean_root_ns_pid" ] && kill -0 "$clean_root_ns_pid" 2>/dev/null; then
    # unshare --kill-child: the namespace's first process, and with it every other, dies with it.
    kill -KILL "$clean_root_ns_pid" 2>/dev/null || true
    wait "$clean_root_ns_pid" 2>/dev/null || true
  fi
  clean_root_remove_scratch
}

clean_root_remove_scratch() {
  # Mounts made in the namespaces are not seen here; one left by anything else under the work
  # directory stops the removal, so that no file outside it is ever deleted through a mount.
  if grep -q " $clean_root_work/" /proc/self/mounts; then
    echo "$clean_root_name: mounts left under $clean_root_work, not removing it:" >&2
    grep " $clean_root_work/" /proc/self/mounts >&2
    return
  fi
  rm -rf "$clean_root" "${clean_root_scratch[@]}"
}

# Runs "$@" in new mount and PID namespaces (the mounts private to them) with a time limit, in
# the background so that clean_root_cleanup can kill it by its PID.
in_namespaces() {
  local limit=$1
  shift
  unshare --mount --propagation private --pid --fork --kill-child -- timeout --kill-after=10 "$limit" "$@" &
  clean_root_ns_pid=$!
  local status=0
  wait "$clean_root_ns_pid" || status=$?
  clean_root_ns_pid=""
  return "$status"
}

# --- the archive this machine's apt uses, per suite ------------------------------------------------
# The first enabled "deb" source of SUITE: one-line entries (sources.list, *.list), then deb822
# stanzas (*.sources).
archive_for_suite() {
  local suite=$1 file url=""
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    url=$(sed -nE "s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+${suite}[[:space:]].*/\2/p" "$file" |
      head -n1)
    if [ -n "$url" ]; then
      echo "$url"
      return
    fi
  done
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    url=$(awk -v suite="$suite" -v RS= '{
        types = ""; uris = ""; suites = ""; enabled = "yes"
        n = split($0, lines, "\n")
        for (i = 1; i <= n; i++) {
          if (lines[i] ~ /^Types:/) types = lines[i] " "
          if (lines[i] ~ /^URIs:/) uris = lines[i]
          if (lines[i] ~ /^Suites:/) suites = lines[i] " "
          if (lines[i] ~ /^Enabled:[ \t]*no/) enabled = "no"
        }
        if (enabled == "yes" && types ~ /[ \t]deb[ \t]/ && suites ~ ("[ \t]" suite "[ \t]")) {
          split(uris, words, /[ \t]+/)
          print words[2]
          exit
        }
      }' "$file")
    if [ -n "$url" ]; then
      echo "$url"
      return
    fi
  done
}

# The release is this machine's, or $clean_root_codename where the caller set it (an older Debian
# release, from the archives this machine's apt uses for its own: Debian keeps every release's
# suites in the same archives).
clean_root_find_sources() {
  local host_codename
  # shellcheck source=/dev/null
  host_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  if [ -z "$host_codename" ]; then
    echo "$clean_root_name: /etc/os-release: no VERSION_CODENAME" >&2
    exit 1
  fi
  codename=${clean_root_codename:-$host_codename}
  mirror=$(archive_for_suite "$codename")
  [ -n "$mirror" ] || mirror=$(archive_for_suite "$host_codename")
  if [ -z "$mirror" ]; then
    echo "$clean_root_name: no 'deb' source for $host_codename in /etc/apt/sources.list or sources.list.d" >&2
    exit 1
  fi
  # The release's updates and security suites, where apt has them, so that the clean root is as
  # current as this machine, whose libraries hvdrun was built against.
  sources="deb $mirror $codename main"
  extra_repos=()
  local kind url
  for kind in updates security; do
    url=$(archive_for_suite "$codename-$kind")
    [ -n "$url" ] || url=$(archive_for_suite "$host_codename-$kind")
    if [ -n "$url" ]; then
      sources+=$'\n'"deb $url $codename-$kind main"
      extra_repos+=("--extra-repo=deb $url $codename-$kind main")
    fi
  done
}

# --- the root ---------------------------------------------------------------------------------------
clean_root_make() {
  local cache=${HVDRUN_CLEAN_ROOT_CACHE:-$(dirname "$clean_root_work")/clean-root-cache}
  # One tarball a day: the root is as current as the archive that day, and apt-get update in the
  # root brings what changed since.
  local tarball
  tarball=$cache/$codename-minbase-eatmydata-$(date -u +%F).tar
  mkdir -p "$cache"
  # The lock is held by this shell (not a subshell), so that an interrupted debootstrap is ended
  # by clean_root_cleanup like every other namespace.
  exec 9>"$cache/lock"
  flock 9
  if [ ! -f "$tarball" ]; then
    local fresh=$cache/debootstrap.tmp
    rm -rf "$fresh"
    echo "$clean_root_name: debootstrap --variant=minbase $codename from $mirror (kept in $tarball)"
    in_namespaces 600 debootstrap --variant=minbase --include=eatmydata "$codename" "$fresh" "$mirror" \
      >"$cache/debootstrap.log" 2>&1 ||
      {
        tail -n 20 "$cache/debootstrap.log" >&2
        exit 1
      }
    tar --numeric-owner -C "$fresh" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$fresh"
    find "$cache" -maxdepth 1 -name "$codename-minbase-eatmydata-*.tar" ! -path "$tarball" -delete
  fi
  exec 9>&-
  rm -rf "$clean_root"
  mkdir -p "$clean_root"
  tar --numeric-owner -C "$clean_root" -xf "$tarball"
}

clean_root_configure() {
  printf '%s\n' "$sources" >"$clean_root/etc/apt/sources.list"
  cp /etc/resolv.conf "$clean_root/etc/resolv.conf"
  printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$clean_root/etc/hosts"
}

in_root() {
  local limit=$1 script
  script=$(cat)
  # shellcheck disable=SC2016  # expanded by the bash started in the namespaces
  in_namespaces "$limit" bash -c '
    set -e
    root=$1 script=$2
    shift 2
    mount -t proc proc "$root/proc"
    mount -t sysfs -o ro sysfs "$root/sys"
    mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
    for bind in "$@"; do
      mkdir -p "$root${bind#*:}"
      mount --bind "${bind#*:}" "$root${bind#*:}"
      if [ "${bind%%:*}" = ro ]; then mount -o remount,bind,ro "$root${bind#*:}"; fi
    done
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive bash -euo pipefail -c "$script"' _ "$clean_root" "$script" \
    "${clean_root_binds[@]}"
}
