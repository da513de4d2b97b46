#!/usr/bin/env bash
# smoke.sh BIN_DIR VERSION: runs the installed programs as a user would, with nothing but
# bash, grep and coreutils (it also runs inside the clean Debian root of test-debs.sh):
#   --version of each; a whole replay (roomcast-sim writes a small home, edge-agent --dry-run
#   replays each node's capture, aggregator replay fuses them); and a bad config of each program,
#   which must exit 78 with the problem's path in the message.
set -euo pipefail
bin=$1 version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }
check() { echo "smoke: ok: $*" >&2; }

for p in edge-agent aggregator roomcast-sim; do
  got=$("$bin/$p" --version) || fail "$p --version exited $?"
  [ "$got" = "$version" ] || fail "$p --version printed '$got', expected '$version'"
done
check "--version of edge-agent, aggregator, roomcast-sim is $version"

"$bin/roomcast-sim" generate --layout cottage --seed 3 --duration 20 --out "$work/home" > /dev/null 2> "$work/generate.log" \
  || { cat "$work/generate.log" >&2; fail "roomcast-sim generate exited non-zero"; }
captures=("$work"/home/nodes/*.btsnoop)
[ -f "${captures[0]}" ] || fail "roomcast-sim generate wrote no captures"
for capture in "${captures[@]}"; do
  node=$(basename "$capture" .btsnoop)
  "$bin/edge-agent" run --config "$work/home/agent.yaml" --node "$node" --source "btsnoop:$capture" \
    --speed max --dry-run > "$work/$node.jsonl" 2> "$work/$node.log" \
    || { cat "$work/$node.log" >&2; fail "edge-agent replay of $node exited non-zero"; }
  grep -q "\"topic\":\"roomcast/nodes/$node/beacons/" "$work/$node.jsonl" \
    || fail "edge-agent replay of $node published no beacon reading"
done
check "edge-agent replayed ${#captures[@]} captures"

"$bin/aggregator" replay --config "$work/home/site.yaml" "$work"/*.jsonl > "$work/decisions.jsonl" 2> "$work/replay.log" \
  || { cat "$work/replay.log" >&2; fail "aggregator replay exited non-zero"; }
# The cottage has two rooms; every room decision names one of them (or away).
decisions=$(grep -c '"topic":"roomcast/presence/[^"]*/room"' "$work/decisions.jsonl" || true)
[ "$decisions" -gt 0 ] || fail "aggregator replay decided no room"
if grep '"topic":"roomcast/presence/[^"]*/room"' "$work/decisions.jsonl" | grep -vqE '"payload":"(kitchen|living|not_home)"'; then
  fail "aggregator replay decided a room the site does not have"
fi
check "aggregator replay published $decisions room decisions"

# Exit code 78 (EX_CONFIG) with the offending key's path, for each program that reads a config.
printf 'rooms:\n  - name: kitchen\nnodes:\n  - name: kitchen-pi\n    room: kitchn\n' > "$work/bad-site.yaml"
set +e
"$bin/aggregator" replay --config "$work/bad-site.yaml" "$work/decisions.jsonl" > /dev/null 2> "$work/bad-site.log"
rc=$?
set -e
[ "$rc" -eq 78 ] || fail "aggregator with a bad config exited $rc, expected 78"
grep -q "nodes\[0\].room: unknown room 'kitchn'" "$work/bad-site.log" || fail "aggregator's config error lacks the problem: $(cat "$work/bad-site.log")"
printf 'node: kitchen-pi\nranging:\n  path_loss_exponent: 9\n' > "$work/bad-agent.yaml"
set +e
"$bin/edge-agent" run --config "$work/bad-agent.yaml" --source "btsnoop:${captures[0]}" --speed max --dry-run > /dev/null 2> "$work/bad-agent.log"
rc=$?
set -e
[ "$rc" -eq 78 ] || fail "edge-agent with a bad config exited $rc, expected 78"
grep -q "ranging.path_loss_exponent: must be between" "$work/bad-agent.log" || fail "edge-agent's config error lacks the problem: $(cat "$work/bad-agent.log")"
check "a bad config exits 78 and names the key (aggregator, edge-agent)"
