#!/usr/bin/env bash
# The main job with no radio: a private mosquitto on a free loopback port, one
# edge-agent per node of a simulated two-floor home replaying that node's
# capture in real time, the aggregator with its dashboard (URL printed), and a
# live view of who is in which room in the terminal.
# Stop with Ctrl-C. DEMO_SECONDS=N stops by itself after N seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/broker.sh
bin=$(${SWIFT:-swift} build -c release --show-bin-path ${BUILD_FLAGS:-})
home=${DEMO_HOME:-.build/demo-home-v3}
work=$(mktemp -d /tmp/roomcast-demo.XXXXXX)
pids=()

cleanup() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  echo "demo stopped; logs in $work" >&2
}
trap cleanup EXIT INT TERM

if [ ! -f "$home/site.yaml" ]; then
  echo "demo: simulating a two-floor home with 3 people, tags, phones and nodes that advertise ($home)" >&2
  "$bin/roomcast-sim" generate --layout house --seed 7 --duration 900 --phones 2 --node-beacons --out "$home" >&2
fi

start_private_broker "$work"
pids+=($broker_pid)
echo "demo: broker on $broker" >&2

# The dashboard on loopback: a free port (DEMO_HTTP=host:port to choose one).
http=${DEMO_HTTP:-127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null || echo 8267)}
"$bin/aggregator" run --config "$home/site.yaml" --broker "$broker" --http "$http" > "$work/aggregator.log" 2>&1 &
pids+=($!)
echo "demo: dashboard at http://$http/ (metrics at http://$http/metrics)" >&2
for capture in "$home"/nodes/*.btsnoop; do
  node=$(basename "$capture" .btsnoop)
  "$bin/edge-agent" run --config "$home/agent.yaml" --node "$node" --broker "$broker" \
    --source "btsnoop:$capture" --speed realtime > "$work/$node.log" 2>&1 &
  pids+=($!)
done
echo "demo: $(ls "$home"/nodes/*.btsnoop | wc -l) edge agents replaying 15 minutes of the home in real time; logs in $work" >&2

if [ -n "${DEMO_SECONDS:-}" ]; then
  "$bin/aggregator" watch --broker "$broker" &
  pids+=($!)
  sleep "$DEMO_SECONDS"
else
  "$bin/aggregator" watch --broker "$broker"
fi
