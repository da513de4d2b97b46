#!/usr/bin/env bash
# Every benchmark, release build, printing numbers (no pass/fail: targets are in the issues and docs).
# BENCH_QUICK=1 shortens the long ones.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build -c release --show-bin-path)
quick=${BENCH_QUICK:-}
run() { echo; echo "== roomcast-bench $*"; "$bin/roomcast-bench" "$@"; }
# The first value with BENCH_QUICK set, else the second.
pick() { if [ -n "$quick" ]; then echo "$1"; else echo "$2"; fi; }
run hci ${quick:+--reports 1000000}
run advertising
run agent --seconds "$(pick 10 30)"
run crowd --advertisers "$(pick 100000 300000)"
run fusion
run fusion --geometry
run simulation --seeds "$(pick 1 2)" --duration "$(pick 300 600)"
if "$bin/roomcast-bench" --help 2>&1 | grep -q '^  aggregator'; then run aggregator; fi
