#!/usr/bin/env bash
# Release binaries for installation (make dist): edge-agent, aggregator and roomcast-sim, built
# self-contained (Swift runtime and Foundation linked in: Package.swift) and split in two:
#   .build/dist/bin/<program>          stripped, small, with a .gnu_debuglink to <program>.debug
#   .build/dist/debug/<program>.debug  its DWARF and symbol table, compressed
# gdb, eu-stack and Swift's crash backtracer find the .debug file by build id under
# /usr/lib/debug/.build-id/ (where the -dbgsym packages put it) or by the debuglink name next to the
# binary or under /usr/lib/debug/<dir of the binary>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
programs=(edge-agent aggregator roomcast-sim)
SWIFT=${SWIFT:-swift}

for p in "${programs[@]}"; do
  $SWIFT build -c release --product "$p" ${BUILD_FLAGS:-} >&2
done
bin=$($SWIFT build -c release --show-bin-path ${BUILD_FLAGS:-})
out=.build/dist
rm -rf "$out"
mkdir -p "$out/bin" "$out/debug"

for p in "${programs[@]}"; do
  objcopy --only-keep-debug --compress-debug-sections=zlib "$bin/$p" "$out/debug/$p.debug"
  # Everything but what the loader needs goes (symbols too: they are in the .debug file), as
  # Debian's dh_strip does; .comment and .note (but not the build id, .note.gnu.build-id) with it.
  objcopy --strip-all --remove-section=.comment --remove-section=.note \
    --add-gnu-debuglink="$out/debug/$p.debug" "$bin/$p" "$out/bin/$p"
  chmod 0644 "$out/debug/$p.debug"
  printf 'dist: %-13s %4d MB unstripped -> %3d MB (+ %3d MB .debug)\n' "$p" \
    $(( $(stat -c %s "$bin/$p") >> 20 )) $(( $(stat -c %s "$out/bin/$p") >> 20 )) \
    $(( $(stat -c %s "$out/debug/$p.debug") >> 20 )) >&2
done
