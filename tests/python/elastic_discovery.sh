#!/bin/sh
# An hvd.elastic job whose hosts change through --host-discovery-script while it trains
# (elastic_discovery.py): `grow` starts on 127.0.0.1-2 and adds 127.0.0.3, `shrink` starts on all three and
# drops two, going on with one rank. Passes when hvdrun exits 0 after one re-formation and every rank of
# round 1 (3 ranks, or 1) printed its line, each sample committed once; what hvdrun and the ranks printed
# is shown either way.
# Usage: elastic_discovery.sh HVDRUN PYTHON SCRIPT grow|shrink
set -u
hvdrun=$1 python=$2 script=$3 mode=$4
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
if [ "$mode" = grow ]; then
  first='127.0.0.1 127.0.0.2' then='127.0.0.1 127.0.0.2 127.0.0.3' np=2 size=3
  round='round 1: 3 ranks on 3 hosts; hosts lost: none; added: 127.0.0.3; why: new slots on 127.0.0.3;'
else
  first='127.0.0.1 127.0.0.2 127.0.0.3' then='127.0.0.1' np=3 size=1
  round='round 1: 1 ranks on 1 hosts; hosts lost: 127.0.0.2, 127.0.0.3; added: none; why: 127.0.0.2 left discovery, 127.0.0.3 left discovery;'
fi
printf '%s\n' $first > "$dir/hosts"
mkdir "$dir/samples" || exit 1
printf '#!/bin/sh\nexec cat "%s/hosts"\n' "$dir" > "$dir/hosts.sh"
chmod +x "$dir/hosts.sh"
ELASTIC_TEST_HOSTS_FILE="$dir/hosts" ELASTIC_TEST_NEW_HOSTS="$then" ELASTIC_TEST_SIZE=$size ELASTIC_TEST_SAMPLES="$dir/samples" \
  "$hvdrun" -np $np --min-np 1 --host-discovery-script "$dir/hosts.sh" --gloo "$python" "$script" \
  > "$dir/out" 2>&1
code=$?
cat "$dir/out"
fail() { echo "elastic_discovery.sh $mode: $1"; exit 1; }
[ $code = 0 ] || fail "hvdrun exited with $code"
grep -qF "hvdrun: elastic: $round" "$dir/out" || fail "no line 'hvdrun: elastic: $round'"
lines=$(grep -c "of $size, round 1, step 300, resets .*, identical True, samples each once" "$dir/out")
[ "$lines" = $size ] || fail "$lines ranks of round 1 ended, not $size"
echo "elastic_discovery.sh $mode: passed"
