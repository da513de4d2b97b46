#!/usr/bin/env bash
# Saves a picture of a running dashboard for a developer to look at (not asserted):
#   scripts/dashboard-screenshot.sh [url] [out.png] [width,height]
# e.g. with `make demo` running, its printed URL; 390,844 for a phone's screen.
# --timeout, not --virtual-time-budget: the page's event stream never ends, and virtual time
# waits for open requests.
set -euo pipefail
url=${1:-http://127.0.0.1:8267/}
out=${2:-dashboard.png}
size=${3:-1200,900}
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$size" \
  --timeout=4000 --screenshot="$out" "$url" >/dev/null 2>&1
echo "$out"
