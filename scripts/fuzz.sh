#!/usr/bin/env bash
# Runs every libFuzzer harness of roomcast-fuzz (Sources/Fuzz) for a bounded time, seeded from
# the test fixtures, and prints executions and crashes per harness (docs/reliability.md).
#
#   FUZZ_SECONDS=60      seconds per harness
#   FUZZ_TARGETS="ad wire ..."  harnesses to run (default: every one the binary knows)
#   FUZZ_JOBS=1          parallel libFuzzer workers per harness (-fork); the build machine is shared
#   FUZZ_SKIP_BUILD=1    reuse the last build
#   FUZZ_ASAN=0          libFuzzer without AddressSanitizer (faster, finds fewer memory bugs)
#
# Corpora grow across runs in .build/fuzz/corpus/<target>; crash inputs land in
# .build/fuzz/artifacts/<target>/. Replay one with a plain build:
#   swift run roomcast-fuzz <target> <file>
# Exit status: 0 when no harness crashed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-1}
SCRATCH=.build/fuzz
BIN=$SCRATCH/release/roomcast-fuzz
VECTORS=Tests/TestSupport/Vectors
SEEDS=Tests/FuzzRegressions/seeds
DICTS=Tests/FuzzRegressions/dictionaries

# -sanitize=fuzzer,address in ONE flag: with two -sanitize flags swiftc keeps only the last,
# which silently drops coverage instrumentation and leaves libFuzzer blind.
sanitizers=fuzzer,address
if [ "${FUZZ_ASAN:-1}" = 0 ]; then sanitizers=fuzzer; fi

if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  echo "fuzz: building roomcast-fuzz (-sanitize=$sanitizers, release)" >&2
  # lld: gold crashes linking the fuzzer runtime with Swift objects.
  if ! $SWIFT build -c release --product roomcast-fuzz --scratch-path "$SCRATCH" \
      -Xswiftc -sanitize="$sanitizers" -Xswiftc -DFUZZING -Xswiftc -parse-as-library \
      -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld >&2; then
    echo "fuzz: build failed" >&2
    exit 1
  fi
fi

# The binary names its harnesses when none is selected.
known=$(ROOMCAST_FUZZ_TARGET= "$BIN" 2>&1 | sed -n 's/.*ROOMCAST_FUZZ_TARGET=//p' | tr '|' ' ')
targets=${FUZZ_TARGETS:-$known}

hex_to_file() { xxd -r -p <<<"$1" > "$2"; }

# Seeds: fixture bytes in the shape each harness reads (see the harness's doc comment).
write_seeds() {
  local t=$1 dir=$SCRATCH/seeds/$1 n=0 hex
  rm -rf "$dir"; mkdir -p "$dir"
  case $t in
    ad)
      # [address type][address, HCI byte order][rssi] + AD bytes. Headers cycle through a public
      # address, the Core spec's sample resolvable private address (resolves with the harness's
      # IRK) and a random static one.
      local headers=(00554433221100c5 01aafb0d948170b0 01665544332211d8)
      while read -r hex; do
        hex_to_file "${headers[$((n % 3))]}$hex" "$dir/vector-$n"; n=$((n + 1))
      done < <(jq -r 'select(.hex_level == "ad_structures") | .hex' "$VECTORS"/*.jsonl)
      # ibeacon-ble gives manufacturer data after the company id: wrap it in an AD structure.
      while read -r hex; do
        hex_to_file "00554433221100c5$(printf '%02x' $(( ${#hex} / 2 + 3 )))ff4c00$hex" "$dir/mfg-$n"; n=$((n + 1))
      done < <(jq -r 'select(.hex_level == "mfg_data_after_company_id") | .hex' "$VECTORS"/*.jsonl)
      ;;
    hci)
      while read -r hex; do hex_to_file "$hex" "$dir/h4-$n"; n=$((n + 1)); done \
        < <(jq -r 'select(.hex_level == "hci_event_with_h4") | .hex' "$VECTORS"/*.jsonl)
      # Events without the H4 type byte: prepend 04 (HCI event).
      while read -r hex; do hex_to_file "04$hex" "$dir/event-$n"; n=$((n + 1)); done \
        < <(jq -r 'select(.hex_level == "hci_event_no_h4") | .hex' "$VECTORS"/*.jsonl)
      # LE Advertising Report parameters from Num_Reports on: wrap in an LE Meta event.
      while read -r hex; do
        hex_to_file "043e$(printf '%02x' $(( ${#hex} / 2 + 1 )))02$hex" "$dir/params-$n"; n=$((n + 1))
      done < <(jq -r 'select(.hex_level == "le_adv_report_params") | .hex' "$VECTORS"/*.jsonl)
      ;;
    btsnoop)
      # The start of the HCI fixture capture (cut inside a record on purpose), and small captures
      # in each datalink built from the H4 vectors.
      head -c 6000 Tests/RoomcastHCITests/Fixtures/kolakowski-robot-anchor1.btsnoop > "$dir/fixture-head"
      local link flags records
      for link in 1002 1001 2001; do
        records=""
        while read -r hex; do
          case $link in
            1002) flags=00000001 ;;
            1001) flags=00000003; hex=${hex:2} ;;
            2001) flags=00000003; hex=${hex:2} ;;
          esac
          records+=$(printf '%08x%08x%s00000000%s%s' $(( ${#hex} / 2 )) $(( ${#hex} / 2 )) "$flags" \
            00e2d8b3c2a0c000 "$hex")
          n=$((n + 1))
          if [ $((n % 8)) -eq 0 ]; then
            hex_to_file "$(printf '6274736e6f6f700000000001%08x' "$link")$records" "$dir/capture-$link-$n"
            records=""
          fi
        done < <(jq -r 'select(.hex_level == "hci_event_with_h4") | .hex' "$VECTORS"/*.jsonl | head -64)
      done
      ;;
    config)
      cp Tests/SharedTests/Fixtures/*.yaml Tests/SharedTests/Fixtures/*.json "$dir"/
      ;;
  esac
  if [ -d "$SEEDS/$t" ]; then cp "$SEEDS/$t"/* "$dir"/ 2>/dev/null; fi
}

# Dictionaries: checked-in ones (the aggregator's payload targets also get the wire keys),
# and for config every key the fixtures use.
dictionary() {
  local t=$1 out=$SCRATCH/dicts/$1.dict
  mkdir -p "$SCRATCH/dicts"
  : > "$out"
  if [ -f "$DICTS/$t.dict" ]; then cat "$DICTS/$t.dict" >> "$out"; fi
  case $t in intake|espresense|calibration|lease) cat "$DICTS/wire.dict" >> "$out" ;; esac
  if [ "$t" = config ]; then
    cat Tests/SharedTests/Fixtures/*.yaml "$SEEDS/config"/*.yaml \
      | sed -n 's/^[ -]*\([a-z_][a-z0-9_]*\):.*/\1/p' | sort -u | sed 's/.*/"&:"/' >> "$out"
  fi
  [ -s "$out" ] && echo "$out"
}

total_crashes=0
summary=()
for t in $targets; do
  write_seeds "$t"
  corpus=$SCRATCH/corpus/$t
  artifacts=$SCRATCH/artifacts/$t
  log=$SCRATCH/logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  before=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  extra=()
  dict=$(dictionary "$t") && extra+=(-dict="$dict")
  # Inputs up to what each decoder can be handed: MQTT payloads past the 64 KiB limit
  # (WireFormat.maxPayloadBytes) plus a topic, so the size checks are reached; captures with
  # many records across the reader's 4 KiB refills; config files with long lists; H4 streams
  # of many events (an extended report reassembles up to 1650 bytes).
  case $t in
    wire|intake|espresense|calibration|lease) max_len=66560 ;;
    btsnoop|config|learned) max_len=65536 ;;
    hci) max_len=16384 ;;
    *) max_len=4096 ;;
  esac
  if [ "$JOBS" -gt 1 ]; then extra+=(-fork="$JOBS" -ignore_crashes=1); fi
  echo "fuzz: $t for ${SECONDS_PER_TARGET}s (log $log)" >&2
  # SWIFT_BACKTRACE=enable=no: Swift's crash handler reads freed memory under ASan and hides the
  # real report; a trap must reach libFuzzer as a plain deadly signal.
  ROOMCAST_FUZZ_TARGET=$t SWIFT_BACKTRACE=enable=no nice -n 10 "$BIN" \
    -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -max_len="$max_len" -artifact_prefix="$artifacts/" "${extra[@]}" "$corpus" "$SCRATCH/seeds/$t" > "$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ -z "$runs" ]; then runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#'); fi
  after=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  crashes=$((after - before))
  corpus_size=$(find "$corpus" -type f | wc -l)
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  total_crashes=$((total_crashes + crashes))
  line=$(printf '%-8s executions %10s  corpus %6s  crashes %s' "$t" "${runs:-?}" "$corpus_size" "$crashes")
  if [ "$crashes" -gt 0 ]; then
    line+="  (see $log; inputs in $artifacts)"
    # The failure and the first frame in our sources (release builds trap without a message).
    grep -m1 -E 'Fatal error|Swift runtime failure|ERROR: AddressSanitizer|ERROR: libFuzzer' "$log" | sed 's/^ *//; s/^/    /' >&2
    grep -m1 -E " in .*$PWD/Sources/" "$log" | sed 's/^ *//; s/^/    /' >&2
  fi
  summary+=("$line")
done

echo
echo "fuzz summary (${SECONDS_PER_TARGET}s per harness):"
printf '  %s\n' "${summary[@]}"
[ "$total_crashes" -eq 0 ]
