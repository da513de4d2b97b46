#!/usr/bin/env bash
# Builds and runs the whole test suite under AddressSanitizer and ThreadSanitizer, each in its own
# scratch directory, and prints per sanitizer: build time, test time, test result, sanitizer reports
# (docs/reliability.md).
#
#   SANITIZERS="address thread"   which to run
#   SANITIZE_FILTER=<regex>       passed to `swift test --filter` (default: every test)
#   SANITIZE_SKIP=<regex>         passed to `swift test --skip`
#   SANITIZE_SKIP_BUILD=1         reuse the last build
#
# Logs: .build/sanitize-<name>.log, and every instrumented process's reports (the test runner's and
# the binaries' it starts) in .build/sanitize-<name>-reports/. Exit status: 0 when every suite passed
# with no report.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
sanitizers=${SANITIZERS:-address thread}
filter=()
if [ -n "${SANITIZE_FILTER:-}" ]; then filter=(--filter "$SANITIZE_FILTER"); fi
if [ -n "${SANITIZE_SKIP:-}" ]; then filter+=(--skip "$SANITIZE_SKIP"); fi

# Swift's own crash handler reads freed memory under ASan and would hide the real report.
export SWIFT_BACKTRACE=enable=no
# Keep going after the first report so one run lists them all; leaks are checked at exit.
# Suppressions list only reports checked to be outside our code or false positives; see the files.
# The symbolizer is named rather than looked up in PATH: a binary a test starts with an environment
# of its own may have none, and suppressions match symbol names.
symbolizer=$(command -v llvm-symbolizer || true)
symbolizer_option=${symbolizer:+:external_symbolizer_path=$symbolizer}
asan_options=${ASAN_OPTIONS:-halt_on_error=0:detect_leaks=1$symbolizer_option}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0}
tsan_options=${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan-suppressions.txt$symbolizer_option}

failed=0
summary=()
for s in $sanitizers; do
  case $s in
    address) short=asan ;;
    thread) short=tsan ;;
    *) echo "sanitize: unknown sanitizer '$s' (address or thread)" >&2; exit 64 ;;
  esac
  scratch=.build/$short
  log=.build/sanitize-$short.log
  # Every instrumented process writes its reports here as report.<pid>: the test runner and the
  # binaries the tests start (an aggregator's report would otherwise land in that test's own log
  # of the child and be seen only as an exit status).
  reports=.build/sanitize-$short-reports
  rm -rf "$reports"
  mkdir -p "$reports"
  : > "$log"
  export ASAN_OPTIONS="$asan_options:log_path=$PWD/$reports/report"
  export TSAN_OPTIONS="$tsan_options:log_path=$PWD/$reports/report"
  build_s=0
  if [ "${SANITIZE_SKIP_BUILD:-0}" != 1 ]; then
    echo "sanitize: building tests with --sanitize=$s (scratch $scratch)" >&2
    t0=$(date +%s)
    if ! $SWIFT build --build-tests --sanitize="$s" --scratch-path "$scratch" >> "$log" 2>&1; then
      tail -20 "$log" >&2
      summary+=("$(printf '%-5s build FAILED after %ss (see %s)' "$short" $(( $(date +%s) - t0 )) "$log")")
      failed=1
      continue
    fi
    build_s=$(( $(date +%s) - t0 ))
  fi
  echo "sanitize: running tests under $short (log $log)" >&2
  t0=$(date +%s)
  $SWIFT test --skip-build --sanitize="$s" --scratch-path "$scratch" "${filter[@]}" >> "$log" 2>&1
  status=$?
  test_s=$(( $(date +%s) - t0 ))
  found=$(cat "$log" "$reports"/report.* 2>/dev/null \
    | grep -cE '^(==[0-9]+==ERROR: AddressSanitizer|==[0-9]+==ERROR: LeakSanitizer|WARNING: ThreadSanitizer)')
  # Swift Testing's final line (the XCTest pass has no tests in this package).
  result=$(grep -E 'Test run with [0-9]+ tests?' "$log" | tail -1)
  if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then failed=1; fi
  summary+=("$(printf '%-5s build %4ss  tests %4ss  exit %s  reports %s  %s' "$short" "$build_s" "$test_s" "$status" "$found" "$result")")
  if [ "$found" -ne 0 ]; then
    echo "sanitize: $found report(s) in $log and $reports/" >&2
    cat "$log" "$reports"/report.* 2>/dev/null | grep -E '^SUMMARY: (AddressSanitizer|LeakSanitizer|ThreadSanitizer)' \
      | sort | uniq -c | sort -rn | head -10 | sed 's/^/    /' >&2
  fi
done

echo
echo "sanitizer summary:"
printf '  %s\n' "${summary[@]}"
exit $failed
