#!/usr/bin/env bash
# Regenerates Sources/EdgeAgent/link-order.txt: every function edge-agent runs while replaying a
# capture (as fast as it can, paced, and publishing to a private broker) and while scanning a live
# radio (the controller roomcast-bench plays over a stream socket, a SOCK_SEQPACKET socket and a
# pseudo-terminal), recorded with valgrind's callgrind. A release link hands the list to lld (--symbol-ordering-file), which places those
# functions next to each other, so start-up and the report path touch a few hundred kilobytes of
# code pages instead of 8 MB scattered over the binary (docs/performance.md). Names that no longer
# exist are ignored, so a stale list costs memory, never correctness; rerun after larger changes.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind > /dev/null || { echo "agent-link-order: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
swift build -c release --product edge-agent
swift build -c release --product roomcast-bench
bin=$(swift build -c release --show-bin-path)/edge-agent
bench=$(swift build -c release --show-bin-path)/roomcast-bench
work=$(mktemp -d)
broker_pid=
trap '[ -n "$broker_pid" ] && kill "$broker_pid" 2> /dev/null; rm -rf "$work"' EXIT
# shellcheck source=lib/broker.sh
source scripts/lib/broker.sh
start_private_broker "$work"
capture=Tests/RoomcastHCITests/Fixtures/kolakowski-robot-anchor1.btsnoop
record() {
  local name=$1; shift
  valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/cg.$name" "$bin" "$@" > /dev/null 2> "$work/$name.log" \
    || { echo "agent-link-order: the $name run failed (log: $work/$name.log)" >&2; cat "$work/$name.log" >&2; exit 1; }
}
record max run --node order --source "btsnoop:$capture" --speed max --dry-run --log-level error
record paced run --node order --source "btsnoop:$capture" --speed 50 --dry-run --log-level error
record broker run --node order --source "btsnoop:$capture" --speed 50 --broker "$broker" --log-level error
# The live path: the benchmark runs the agent it is given against its emulated controller.
printf '#!/bin/sh\nexec valgrind --tool=callgrind --demangle=no --callgrind-out-file=%s/cg.live.%%p %s "$@"\n' "$work" "$bin" > "$work/agent.sh"
chmod +x "$work/agent.sh"
"$bench" agent --seconds 5 --live stream,seqpacket,pty --windows default --agent "$work/agent.sh" > "$work/live.log" 2>&1 \
  || { echo "agent-link-order: the live run failed (log: $work/live.log)" >&2; cat "$work/live.log" >&2; exit 1; }
python3 - "$work"/cg.* > Sources/EdgeAgent/link-order.txt <<'PY'
import re, sys
names = set()
for path in sys.argv[1:]:
    for line in open(path, errors="replace"):
        m = re.match(r"^c?fn=\(\d+\) (\S+)$", line.rstrip("\n"))
        if m:
            names.add(m.group(1))
print("\n".join(sorted(names)))
PY
echo "agent-link-order: $(wc -l < Sources/EdgeAgent/link-order.txt) functions in Sources/EdgeAgent/link-order.txt" >&2
# The list is not a build input SwiftPM tracks: drop the binary so the next release build relinks it.
rm -f "$bin"
