#!/usr/bin/env bash
# The demo: filled in as the pipeline grows (broker, agents replaying captures, aggregator, live view).
set -euo pipefail
bin=$(swift build -c release --show-bin-path)
"$bin/edge-agent" --help || true
