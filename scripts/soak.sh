#!/usr/bin/env bash
# Soak: an hour of a busy simulated home (3 people with phones, tags; 8 nodes)
# replayed at x60 through a private mosquitto, one edge-agent per node and the
# aggregator (about a minute). Samples resident memory (VmRSS) and open file
# descriptors of every process every few seconds, prints the start and end of
# each curve, flags growth after warm-up, and greps every log for error-level
# lines. Exit status 1 when something is flagged.
#
#   SOAK_SPEED=60        replay factor (3600/SPEED seconds of wall time)
#   SOAK_SECONDS=N       stop after N s of wall time (with SOAK_SPEED=1: a live soak with
#                        fusion on the wall clock; at x60 the aggregator drops readings
#                        stamped more than 120 s ahead of its clock, see docs/reliability.md)
#   SOAK_SAMPLE_S=2      seconds between samples
#   SOAK_CONFIG=debug    build configuration (release is the deployed one)
#   SOAK_HOME=dir        scenario folder (generated once, reused)
#   SOAK_NO_BUILD=1      use the binaries as they are
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/broker.sh
config=${SOAK_CONFIG:-debug}
speed=${SOAK_SPEED:-60}
sample_s=${SOAK_SAMPLE_S:-2}
[ -n "${SOAK_NO_BUILD:-}" ] || swift build -c "$config" >&2
bin=$(swift build -c "$config" --show-bin-path)
home=${SOAK_HOME:-.build/soak-home}
work=$(mktemp -d /tmp/roomcast-soak.XXXXXX)
pids=()
names=()

cleanup() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 50); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  echo "soak: logs and samples in $work" >&2
}
trap cleanup EXIT INT TERM

if [ ! -f "$home/site.yaml" ]; then
  echo "soak: simulating an hour of a busy home ($home)" >&2
  "$bin/roomcast-sim" generate --layout house --seed 7 --duration 3600 --phones 3 --out "$home" >&2
fi

start_private_broker "$work"
pids+=($broker_pid); names+=(mosquitto)

# Count what the system says, without holding it up (mosquitto_sub is C and cheap).
mosquitto_sub -p "$port" -t 'roomcast/presence/+' -t 'roomcast/events' -F '%U %t' > "$work/outputs.txt" 2>/dev/null &
pids+=($!); names+=(observer)

"$bin/aggregator" run --config "$home/site.yaml" --broker "$broker" --instance soak > "$work/aggregator.log" 2>&1 &
pids+=($!); names+=(aggregator)
agent_pids=()
for capture in "$home"/nodes/*.btsnoop; do
  node=$(basename "$capture" .btsnoop)
  "$bin/edge-agent" run --config "$home/agent.yaml" --node "$node" --broker "$broker" \
    --source "btsnoop:$capture" --speed "$speed" > "$work/$node.log" 2>&1 &
  pids+=($!); names+=("$node"); agent_pids+=($!)
done
echo "soak: ${#agent_pids[@]} agents replaying 3600 s at x$speed into $broker; sampling every ${sample_s} s" >&2

# Sample until every agent has finished its capture (or 3600/speed + 60 s).
samples="$work/samples.csv"
echo "t,name,pid,rss_kb,fds" > "$samples"
start=$(date +%s.%N)
limit=${SOAK_SECONDS:-$(( 3600 / speed + 60 ))}
while :; do
  now=$(date +%s.%N)
  t=$(awk -v a="$now" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
  for i in "${!pids[@]}"; do
    p=${pids[$i]}
    [ "${names[$i]}" = observer ] && continue
    [ -r "/proc/$p/status" ] || continue
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null || true)
    fds=$(ls "/proc/$p/fd" 2>/dev/null | wc -l)
    [ -n "$rss" ] && echo "$t,${names[$i]},$p,$rss,$fds" >> "$samples"
  done
  running=0
  for p in "${agent_pids[@]}"; do kill -0 "$p" 2>/dev/null && running=1; done
  [ $running -eq 0 ] && break
  if awk -v t="$t" -v l="$limit" 'BEGIN { exit !(t > l) }'; then
    [ -n "${SOAK_SECONDS:-}" ] || echo "soak: agents still running after ${limit} s" >&2
    for p in "${agent_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    break
  fi
  sleep "$sample_s"
done
elapsed=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.0f", a - b }')
agent_status=()
for p in "${agent_pids[@]}"; do
  if wait "$p"; then agent_status+=(0); else agent_status+=($?); fi
done

# Curves: first sample, first after warm-up (a quarter of the run), last, max; flag growth
# after warm-up above 20 % and 8 MiB of RSS, or more than 4 file descriptors.
summary="$work/summary.txt"
awk -F, -v warm="$(awk -v e="$elapsed" 'BEGIN { print e / 4 }')" '
  NR == 1 { next }
  {
    n = $2
    if (!(n in first)) { first[n] = $4; ffd[n] = $5; order[++k] = n }
    if ($1 >= warm && !(n in wrss)) { wrss[n] = $4; wfd[n] = $5 }
    last[n] = $4; lfd[n] = $5; cnt[n]++
    if ($4 > max[n]) max[n] = $4
    if ($5 > mfd[n]) mfd[n] = $5
  }
  END {
    printf "%-12s %7s %9s %9s %9s %9s   %s\n", "process", "samples", "rss start", "warm", "end", "max", "fds start/warm/end/max"
    flagged = 0
    for (i = 1; i <= k; i++) {
      n = order[i]
      if (!(n in wrss)) { wrss[n] = last[n]; wfd[n] = lfd[n] }
      g = last[n] - wrss[n]
      flag = ""
      if (g > 8192 && g > wrss[n] * 0.2) { flag = flag " RSS-GROWTH(+" int(g / 1024) " MiB)"; flagged = 1 }
      if (lfd[n] - wfd[n] > 4) { flag = flag " FD-GROWTH(+" (lfd[n] - wfd[n]) ")"; flagged = 1 }
      printf "%-12s %7d %6.1f MB %6.1f MB %6.1f MB %6.1f MB   %d/%d/%d/%d%s\n", n, cnt[n], first[n] / 1024, wrss[n] / 1024, last[n] / 1024, max[n] / 1024, ffd[n], wfd[n], lfd[n], mfd[n], flag
    }
    exit flagged
  }' "$samples" > "$summary" && growth=0 || growth=1

errors=$(grep -hE '^(error|critical) ' "$work"/*.log | sort | uniq -c | sort -rn || true)
warnings=$(cat "$work"/*.log | grep -cE '^warning ' || true)
presence=$(grep -c ' roomcast/presence/' "$work/outputs.txt" || true)
events=$(grep -c ' roomcast/events' "$work/outputs.txt" || true)
# A frozen engine refreshes presence but decides nothing new: the home's people move all hour, so
# room events must go on arriving into the last quarter of the run.
end_t=$(date +%s.%N)
late_events=$(awk -v from="$(awk -v e="$end_t" -v d="$elapsed" 'BEGIN { printf "%.3f", e - d / 4 }')" \
  '$2 == "roomcast/events" && $1 >= from { n++ } END { print n + 0 }' "$work/outputs.txt")
{
  echo "soak: ${elapsed} s wall of a 3600 s home at x$speed ($config build), agents exited with: ${agent_status[*]}"
  cat "$summary"
  echo "aggregator output: $presence presence messages, $events room events ($late_events in the last quarter); warning lines in all logs: $warnings"
  if [ -n "$errors" ]; then echo "error-level log lines:"; echo "$errors" | head -20; else echo "error-level log lines: none"; fi
  grep -h "rejected\|replay done\|source ended\|stopped" "$work/aggregator.log" | tail -3 || true
} | tee -a "$summary"

status=0
[ "$growth" -eq 0 ] || { echo "soak: FLAGGED growth after warm-up" >&2; status=1; }
[ -z "$errors" ] || { echo "soak: FLAGGED error-level log lines" >&2; status=1; }
[ "$late_events" -gt 0 ] || { echo "soak: FLAGGED no room event in the last quarter: the aggregator stopped deciding" >&2; status=1; }
for s in "${agent_status[@]}"; do [ "$s" -eq 0 ] || { echo "soak: an agent exited with $s" >&2; status=1; }; done
exit $status
