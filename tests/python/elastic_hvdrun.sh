#!/bin/sh
# elastic_recovery.py under hvdrun's own elastic driver: three one-slot hosts (all this machine),
# --min-np 2; rank 2 SIGKILLs itself at step 50; hvdrun re-forms round 1 from the two survivors. Passes
# when hvdrun exits 0 and both survivors printed their line: every step run, identical parameters, each
# sample committed once (both lines are required: a survivor that exits 1 before the other ends would be
# one more failure the job goes on without). What hvdrun and the ranks printed is shown either way.
# Usage: elastic_hvdrun.sh HVDRUN PYTHON SCRIPT
set -u
hvdrun=$1 python=$2 script=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/samples" || exit 1
ELASTIC_TEST_KILL_SELF=1 ELASTIC_TEST_ROUND=1 ELASTIC_TEST_RESETS=2 ELASTIC_TEST_SAMPLES="$dir/samples" \
  "$hvdrun" -np 3 -H 127.0.0.1:1,127.0.0.2:1,127.0.0.3:1 --min-np 2 --gloo "$python" "$script" > "$dir/out" 2>&1
code=$?
cat "$dir/out"
fail() { echo "elastic_hvdrun.sh: $1"; exit 1; }
[ $code = 0 ] || fail "hvdrun exited with $code"
lines=$(grep -c "of 2, round 1, step 300, resets \[2\], identical True, samples each once" "$dir/out")
[ "$lines" = 2 ] || fail "$lines survivors ended, not 2"
echo "elastic_hvdrun.sh: passed"
