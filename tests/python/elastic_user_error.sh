#!/bin/sh
# elastic_user_error.py under hvdrun's elastic driver: three one-slot hosts (all this machine), --min-np 2.
# The user's code raises on rank 1 of round 0 (host 127.0.0.2), the job re-forms on two hosts, raises again
# on the new rank 1 (127.0.0.3), and, one host left for --elastic-timeout, fails as a whole (exit 7) with a
# report that names every host lost and the exception each one's rank ended with. Nothing is left running
# (hvdrun ends its own ranks; the test's timeout bounds the rest).
# Usage: elastic_user_error.sh HVDRUN PYTHON SCRIPT
set -u
hvdrun=$1 python=$2 script=$3
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$hvdrun" -np 3 -H 127.0.0.1:1,127.0.0.2:1,127.0.0.3:1 --min-np 2 --elastic-timeout 2 --gloo \
  "$python" "$script" > "$out" 2>&1
code=$?
cat "$out"
fail() { echo "elastic_user_error.sh: $1"; exit 1; }
[ $code = 7 ] || fail "hvdrun exited with $code, not 7"
error="ValueError: the user's code fails on rank 1 at step 20"
grep -q "^hvdrun: elastic: round 1: 2 ranks on 2 hosts; hosts lost: 127.0.0.2; added: none; why: 127.0.0.2/0/1 ended with exit 1 (last stderr line: $error)" "$out" ||
  fail "no round 1 that names the exception"
grep -q "^hvdrun: elastic job failed in round 1: " "$out" || fail "no failure of the job as a whole"
lost=$(grep "^hvdrun: hosts lost: " "$out")
for host in 127.0.0.2 127.0.0.3; do
  case $lost in
    *"$host (worker $host/0/"*" ended with exit 1 (last stderr line: $error)"*) ;;
    *) fail "the report does not name $host with its exception" ;;
  esac
done
echo "elastic_user_error.sh: passed"
