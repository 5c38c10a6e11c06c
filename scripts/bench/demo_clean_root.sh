#!/usr/bin/env bash
# The README's demo as a first-time user meets it: in a clean debootstrapped root of this machine's
# Debian release (minbase), a fresh clone of this repository at COMMIT runs
# `bash scripts/quickstart.sh demo`, with the root's own empty compiler cache. It prints the
# packages that the demo installed (and how many the root has in all), the wall time from the
# clone to the speedup table, and the table. Root only (exit 77 otherwise); results in docs/benchmarks.md.
#
#   bash scripts/bench/demo_clean_root.sh [COMMIT [WORK_DIR]]    (default HEAD, build/demo-clean-root)
#
# Not timed: making the root (packaging/lib/clean-root.sh: debootstrap, or the day's tarball of a
# root that packaging/test-debs.sh and the bundle's test share) and the clone (a local one, git is
# not in a minbase root). Timed: everything quickstart.sh demo does, apt-get update included, on
# every core of this machine (JOBS unset). The log of the run is WORK_DIR/quickstart.log.
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
commit=${1:-HEAD}
work=$(realpath -m "${2:-$root_dir/build/demo-clean-root}")

# shellcheck source=packaging/lib/clean-root.sh
. "$root_dir/packaging/lib/clean-root.sh"
clean_root_skip_unless_root demo-clean-root "debootstrap, chroot"
clean_root_require demo-clean-root git
revision=$(git -C "$root_dir" rev-parse --verify "$commit^{commit}") ||
  {
    echo "demo-clean-root: no commit '$commit' in $root_dir" >&2
    exit 2
  }
clean_root_init demo-clean-root "$work"

step "a clean root: debootstrap --variant=minbase $codename, or the day's tarball of one"
clean_root_make
clean_root_configure
step "a clone of $revision in the root's /root/hvdrun"
git clone -q --no-local "$root_dir" "$clean_root/root/hvdrun"
git -C "$clean_root/root/hvdrun" checkout -q --detach "$revision"

step "quickstart.sh demo in the root (log: $work/quickstart.log)"
status=0
in_root 3600 >"$work/quickstart.log" 2>&1 <<'SCRIPT' || status=$?
installed() { dpkg-query -W -f '${Status} ${Package}\n' | sed -n 's/^install ok installed //p' | sort; }
installed >/tmp/packages-before
cd /root/hvdrun
start=$SECONDS
bash scripts/quickstart.sh demo
seconds=$((SECONDS - start))
installed >/tmp/packages-after
echo "demo-clean-root: packages installed by the demo: $(comm -13 /tmp/packages-before /tmp/packages-after | wc -l)" \
  "(the root has $(wc -l </tmp/packages-after), $(wc -l </tmp/packages-before) before)"
echo "demo-clean-root: wall time from the clone to the speedup table: $((seconds / 60)) min $((seconds % 60)) s" \
  "($seconds s) on $(nproc) cores"
SCRIPT
if [ "$status" -ne 0 ]; then
  tail -n 40 "$work/quickstart.log" >&2
  echo "demo-clean-root: quickstart.sh demo failed in the clean root (exit $status; $work/quickstart.log)" >&2
  exit 1
fi
sed -n '/^== the speedup table/,$p' "$work/quickstart.log"
