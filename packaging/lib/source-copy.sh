# shellcheck shell=bash
# Sourced by packaging/build-debs.sh and packaging/bundle/build-bundle.sh (bash, set -euo pipefail):
#
#   copy_source_tree ROOT DEST
#
# Copies into DEST (created; emptied first) the files of the git checkout ROOT that git tracks or
# would track (nothing it ignores: no build directory), as they are in the working tree. A tracked
# file deleted in the working tree is left out, as the next commit would. Fails, with one line on
# stderr, when ROOT is not a git checkout.
copy_source_tree() {
  local root=$1 dest=$2
  if ! git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
    echo "copy_source_tree: $root is not a git checkout; the copy is made of the files git tracks" >&2
    return 1
  fi
  rm -rf "$dest"
  mkdir -p "$dest"
  git -C "$root" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' file; do
      if [ -e "$root/$file" ] || [ -L "$root/$file" ]; then printf '%s\0' "$file"; fi
    done |
    tar -C "$root" --null -T - -cf - | tar -C "$dest" -xf -
}

# The project's one version, from project(hvdrun VERSION x.y.z ...) in ROOT/CMakeLists.txt; fails,
# with one line on stderr, when there is no such line.
project_version() {
  local version
  version=$(sed -n 's/^project(hvdrun VERSION \([0-9][0-9.]*\) .*/\1/p' "$1/CMakeLists.txt")
  if [ -z "$version" ]; then
    echo "project_version: $1/CMakeLists.txt: no 'project(hvdrun VERSION x.y.z ...)' line" >&2
    return 1
  fi
  echo "$version"
}
