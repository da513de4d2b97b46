#!/usr/bin/env bash
# Every benchmark, release build, printing numbers (no pass/fail: targets are in the issues and docs).
# BENCH_QUICK=1 shortens the long ones.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(swift build -c release --show-bin-path)
quick=${BENCH_QUICK:-}
run() { echo; echo "== roomcast-bench $*"; "$bin/roomcast-bench" "$@"; }
run hci ${quick:+--reports 1000000}
run advertising
run agent --seconds ${quick:+10}${quick:-30}
run crowd --advertisers ${quick:+100000}${quick:-300000}
run fusion
run fusion --geometry
run simulation --seeds ${quick:+1}${quick:-2} --duration ${quick:+300}${quick:-600}
if "$bin/roomcast-bench" --help 2>&1 | grep -q '^  aggregator'; then run aggregator; fi
