#!/usr/bin/env bash
# The release binaries of make dist run without a Swift toolchain (make dist-test).
#  1. ldd: they load no library of the toolchain's (and none is missing).
#  2. The .debug file belongs to its binary (same build id) and the debuglink finds it: addr2line
#     names a Swift function of the stripped binary, with its source file, only once the .debug
#     file sits where the debuglink says.
#  3. smoke.sh (--version, a whole replay, config errors) in a mount namespace where the
#     toolchain's folder is an empty directory, so nothing of it can be loaded.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=${DIST:-.build/dist}
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/Shared/Model/RoomcastVersion.swift)
fail() { echo "test-binaries: FAIL: $*" >&2; exit 1; }
programs=(edge-agent aggregator roomcast-sim)

# The toolchain's root: /opt/swift here, wherever `swift` lives elsewhere.
swift_bin=$(command -v "${SWIFT:-swift}" || true)
toolchain=${SWIFT_TOOLCHAIN:-$( [ -n "$swift_bin" ] && dirname "$(dirname "$(dirname "$(readlink -f "$swift_bin")")")" || echo /opt/swift)}

for p in "${programs[@]}"; do
  [ -x "$dist/bin/$p" ] || fail "$dist/bin/$p is missing: run make dist"
  libs=$(ldd "$dist/bin/$p")
  if grep -q "not found" <<< "$libs"; then fail "$p: a library is missing: $(grep 'not found' <<< "$libs")"; fi
  if grep -qE "$toolchain|libswift|libFoundation|libicu|libdispatch|libBlocksRuntime" <<< "$libs"; then
    fail "$p loads a toolchain library: $(grep -E "$toolchain|libswift|libFoundation|libicu|libdispatch|libBlocksRuntime" <<< "$libs")"
  fi
done
echo "test-binaries: ok: ldd of ${programs[*]} lists no library of the toolchain ($toolchain)" >&2

# readelf complains (and fails) about the .debug file's missing interpreter; the notes are there.
build_id() { { readelf -n "$1" 2> /dev/null || true; } | sed -n 's/.*Build ID: //p'; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in "${programs[@]}"; do
  id=$(build_id "$dist/bin/$p")
  [ -n "$id" ] && [ "$id" = "$(build_id "$dist/debug/$p.debug")" ] \
    || fail "$p and $p.debug have different build ids"
  [ "$(readelf --string-dump=.gnu_debuglink "$dist/bin/$p" | sed -n 's/.*\] *//p' | head -1)" = "$p.debug" ] \
    || fail "$p has no .gnu_debuglink to $p.debug"
  # A function of Roomcast's own code (module Shared, in all three; a local symbol, mangled name
  # ending in F: a function, not compiler-generated) that only the .debug file's
  # symbol table names. awk reads to the end: an early exit would fail nm under pipefail.
  symbol=$(nm "$dist/debug/$p.debug" | awk '!s && $2 == "t" && $3 ~ /^\$s6Shared.*F$/ { s = $1 " " $3 } END { print s }')
  [ -n "$symbol" ] || fail "$p.debug has no local Swift function symbols"
  address=${symbol%% *} name=${symbol#* }
  mkdir -p "$work/$p" && cp "$dist/bin/$p" "$work/$p/"
  # Without it, addr2line can only name the nearest exported symbol before the address.
  [ "$(addr2line -f -e "$work/$p/$p" "0x$address" | head -1)" != "$name" ] \
    || fail "stripped $p still names $name without its .debug file"
  cp "$dist/debug/$p.debug" "$work/$p/"
  [ "$(addr2line -f -e "$work/$p/$p" "0x$address" | head -1)" = "$name" ] \
    || fail "addr2line does not find $name in $p through its debuglink"
  addr2line -e "$work/$p/$p" "0x$address" | grep -q '\.swift:' || fail "addr2line gives no source file for $name in $p"
done
echo "test-binaries: ok: each .debug matches its binary's build id, and the debuglink symbolises a stripped binary" >&2

[ -d "$toolchain" ] || fail "no toolchain folder $toolchain to hide"
mkdir -p "$work/empty" "$work/bin"
cp "$dist"/bin/* "$work/bin/"
# A private mount namespace: the toolchain's folder is an empty directory for these processes
# only; they get it back when the namespace ends with them. Not root: in a user namespace of its own.
as_root=(); [ "$(id -u)" -eq 0 ] || as_root=(--map-root-user)
unshare "${as_root[@]}" --mount --propagation private bash -c '
  set -euo pipefail
  mount --bind "$1" "$2"
  [ -z "$(ls -A "$2")" ] || { echo "test-binaries: FAIL: $2 is not hidden" >&2; exit 1; }
  bash "$3" "$4" "$5"' hide "$work/empty" "$toolchain" scripts/package/smoke.sh "$work/bin" "$version"
echo "test-binaries: ok: the programs run with $toolchain hidden" >&2
