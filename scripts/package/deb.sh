#!/usr/bin/env bash
# make deb: Debian packages for this machine's architecture, into build/deb/ (docs/deployment.md).
#   roomcast-edge-agent   edge-agent, its systemd unit, /etc/roomcast/agent.yaml
#   roomcast-aggregator   aggregator, its systemd unit, /etc/roomcast/aggregator.yaml
#   roomcast-sim          roomcast-sim (simulated homes, scoring)
#   <each>-dbgsym         the .debug file under /usr/lib/debug/.build-id/
# Built with dpkg-deb from a staging tree of make dist's binaries; Depends computed by
# dpkg-shlibdeps; then checked by lintian, which must report no error or warning (the info tags it
# gives are overridden in deploy/debian/*.lintian-overrides, each with its reason). The same command
# on a Pi gives arm64 packages.
set -euo pipefail
cd "$(dirname "$0")/../.."
dist=.build/dist
out=${DEB_OUT:-build/deb}
stage=.build/deb-stage
debian=deploy/debian
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/Shared/Model/RoomcastVersion.swift)
arch=$(dpkg --print-architecture)
maintainer="Roomcast developers <roomcast@users.noreply.github.com>"
homepage=https://github.com/roomcast/roomcast
grep -q "^roomcast ($version)" "$debian/changelog" \
  || { echo "deb: $debian/changelog has no entry for $version (Sources/Shared/Model/RoomcastVersion.swift)" >&2; exit 1; }
# The packages' version: $version for a release, else a snapshot of it (scripts/package/version.sh).
{ read -r debversion; read -r dated; } < <(bash scripts/package/version.sh --date)
# Reproducible: every file and archive member dated by the release's changelog entry, or the
# snapshot's commit.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$dated}

rm -rf "$stage" && mkdir -p "$stage" "$out"
# Earlier builds' packages go from build/deb/: with two versions of a package there, `apt install
# ./build/deb/x_*.deb` fails. A DEB_OUT of one's own (an apt repository, say) keeps them.
if [ -z "${DEB_OUT:-}" ]; then rm -f "$out"/roomcast-*_"$arch".deb; else rm -f "$out"/roomcast-*_"$debversion"_"$arch".deb; fi
# A snapshot's changelog says what it is, above the release entries.
changelog=$stage/changelog
if [ "$debversion" != "$version" ]; then
  printf 'roomcast (%s) bookworm; urgency=medium\n\n  * Snapshot of %s under way: commit %s.\n\n -- %s  %s\n\n' \
    "$debversion" "$version" "${debversion##*.}" "$maintainer" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")" > "$changelog"
fi
cat "$debian/changelog" >> "$changelog"

# man page from the program's --help and its subcommands' (what a user reads there, kept true by the
# CLI's golden help tests).
manpage() {  # program summary
  local p=$1 summary=$2 help sub
  esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
  help=$("$dist/bin/$p" --help)
  {
    printf '.TH %s 1 "%s" "Roomcast %s" "User Commands"\n' "${p^^}" "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)" "$version"
    printf '.SH NAME\n%s \\- %s\n' "$p" "$summary"
    printf '.SH DESCRIPTION\n.nf\n'; esc <<< "$help"; printf '.fi\n'
    for sub in $(awk '/^SUBCOMMANDS:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' <<< "$help"); do
      printf '.SH "%s %s"\n.nf\n' "${p^^}" "${sub^^}"; "$dist/bin/$p" "$sub" --help | esc; printf '.fi\n'
    done
    printf '.SH FILES\n/etc/roomcast/\n.SH SEE ALSO\n%s\n' "$homepage"
  } | gzip -9n
}

# stage <package> <program> <summary>: the common part of a package's tree.
stage() {
  local pkg=$1 p=$2 summary=$3 root=$stage/$1
  install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/doc/$pkg" "$root/usr/share/man/man1"
  install -m 0755 "$dist/bin/$p" "$root/usr/bin/$p"
  install -m 0644 "$debian/copyright" "$root/usr/share/doc/$pkg/copyright"
  gzip -9nc "$changelog" > "$root/usr/share/doc/$pkg/changelog.gz"
  manpage "$p" "$summary" > "$root/usr/share/man/man1/$p.1.gz"
  if [ -f "$debian/$pkg.lintian-overrides" ]; then
    install -D -m 0644 "$debian/$pkg.lintian-overrides" "$root/usr/share/lintian/overrides/$pkg"
  fi
}

# service <package> <unit> <conffile> <other service package>: unit, sample config, maintainer scripts.
service() {
  local pkg=$1 unit=$2 conffile=$3 other=$4 root=$stage/$1 script
  install -D -m 0644 "deploy/systemd/$unit" "$root/lib/systemd/system/$unit"
  install -D -m 0644 "deploy/$(basename "$conffile")" "$root$conffile"
  echo "$conffile" > "$root/DEBIAN/conffiles"
  for script in postinst prerm postrm; do
    sed -e "s|@PACKAGE@|$pkg|g" -e "s|@PROGRAM@|${pkg#roomcast-}|g" -e "s|@UNIT@|$unit|g" -e "s|@CONFFILE@|$conffile|g" -e "s|@OTHER@|$other|g" \
      "$debian/service.$script" > "$root/DEBIAN/$script"
    chmod 0755 "$root/DEBIAN/$script"
  done
}

# shlibs <binary>: the Depends its shared libraries need, from the installed Debian packages' shlibs.
shlibs() {
  local tmp
  tmp=$(mktemp -d)
  mkdir "$tmp/debian" && printf 'Source: roomcast\n\nPackage: roomcast\nArchitecture: any\n' > "$tmp/debian/control"
  (cd "$tmp" && dpkg-shlibdeps -O -e"$OLDPWD/$1" 2> /dev/null) | sed -n 's/^shlibs:Depends=//p'
  rm -rf "$tmp"
}

# control <package> <depends> <section> <synopsis> <description…>
control() {
  local pkg=$1 depends=$2 section=$3 synopsis=$4 root=$stage/$1
  shift 4
  {
    printf 'Package: %s\nSource: roomcast\nVersion: %s\nArchitecture: %s\nMaintainer: %s\n' "$pkg" "$debversion" "$arch" "$maintainer"
    printf 'Installed-Size: %s\n' "$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
    printf 'Depends: %s\n' "$depends"
    [ -n "${RECOMMENDS:-}" ] && printf 'Recommends: %s\n' "$RECOMMENDS"
    [ -n "${SUGGESTS:-}" ] && printf 'Suggests: %s\n' "$SUGGESTS"
    printf 'Section: %s\nPriority: optional\nHomepage: %s\nDescription: %s\n' "$section" "$homepage" "$synopsis"
    [ $# -eq 0 ] || printf ' %s\n' "$@"
  } > "$root/DEBIAN/control"
}

# build <package>: md5sums, dates, dpkg-deb.
build() {
  local pkg=$1 root=$stage/$1
  (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0r md5sum) > "$root/DEBIAN/md5sums"
  find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  dpkg-deb --root-owner-group -Zxz --build "$root" "$out/${pkg}_${debversion}_${arch}.deb" > /dev/null
}

# dbgsym <package> <program>: the .debug file where gdb and Swift's backtracer look it up by build id.
dbgsym() {
  local pkg=$1 p=$2 root=$stage/$1-dbgsym id
  id=$({ readelf -n "$dist/bin/$p" 2> /dev/null || true; } | sed -n 's/.*Build ID: //p')
  install -D -m 0644 "$dist/debug/$p.debug" "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
  install -d "$root/DEBIAN" "$root/usr/share/doc"
  ln -s "$pkg" "$root/usr/share/doc/$pkg-dbgsym"
  control "$pkg-dbgsym" "$pkg (= $debversion)" debug "debug symbols for $pkg"
  printf 'Auto-Built-Package: debug-symbols\nBuild-Ids: %s\n' "$id" >> "$root/DEBIAN/control"
  build "$pkg-dbgsym"
}

stage roomcast-edge-agent edge-agent "Roomcast edge agent: scan BLE beacons, range them, publish to MQTT"
service roomcast-edge-agent roomcast-edge-agent.service /etc/roomcast/agent.yaml roomcast-aggregator
RECOMMENDS="" SUGGESTS="mosquitto-clients" control roomcast-edge-agent "adduser, $(shlibs "$dist/bin/edge-agent")" net \
  "BLE room presence: the receiver that runs in each room" \
  "Roomcast finds which room each Bluetooth LE beacon, tag, phone or watch is in." \
  "This package holds the edge agent that runs on a Raspberry Pi (or any Linux" \
  "machine with Bluetooth) in each room: it scans BLE advertisements through the" \
  "kernel's HCI socket, decodes iBeacon, AltBeacon, Eddystone and Estimote frames" \
  "and phones by their identity keys, ranges them, and publishes readings to an" \
  "MQTT broker for roomcast-aggregator." \
  "." \
  "The service runs unprivileged, with CAP_NET_RAW only."

stage roomcast-aggregator aggregator "Roomcast aggregator: fuse the nodes' readings into rooms, publish presence"
service roomcast-aggregator roomcast-aggregator.service /etc/roomcast/aggregator.yaml roomcast-edge-agent
RECOMMENDS="" SUGGESTS="mosquitto" control roomcast-aggregator "adduser, $(shlibs "$dist/bin/aggregator")" net \
  "BLE room presence: fuses the receivers' readings into rooms" \
  "Roomcast finds which room each Bluetooth LE beacon, tag, phone or watch is in." \
  "This package holds the aggregator that runs once per site, next to the MQTT" \
  "broker and Home Assistant: it fuses the readings of every roomcast-edge-agent" \
  "into one room per beacon (or away) and publishes retained presence, room" \
  "occupancy, enter and leave events, and Home Assistant MQTT discovery."

stage roomcast-sim roomcast-sim "Roomcast simulator: simulated homes, captures and scores"
RECOMMENDS="" SUGGESTS="roomcast-edge-agent, roomcast-aggregator" control roomcast-sim "$(shlibs "$dist/bin/roomcast-sim")" net \
  "BLE room presence: simulated homes for testing and tuning" \
  "Roomcast finds which room each Bluetooth LE beacon, tag, phone or watch is in." \
  "This package holds roomcast-sim, which simulates people, beacons and receivers" \
  "in a home, writes the receivers' HCI captures and matching configurations" \
  "(for edge-agent and aggregator replays, no radio needed) and scores room" \
  "estimators against the simulated truth."

for pkg in roomcast-edge-agent roomcast-aggregator roomcast-sim; do build "$pkg"; done
dbgsym roomcast-edge-agent edge-agent
dbgsym roomcast-aggregator aggregator
dbgsym roomcast-sim roomcast-sim

for f in "$out"/roomcast-*_"$debversion"_"$arch".deb; do
  printf 'deb: %-48s %3d MB (installed %3d MB)\n' "$(basename "$f")" $(( $(stat -c %s "$f") >> 20 )) \
    $(( $(dpkg-deb -f "$f" Installed-Size) >> 10 )) >&2
done
if [ "${LINTIAN:-1}" != 0 ]; then
  # An error or a warning fails the build; info tags are shown (the known ones are overridden above).
  lintian --fail-on error,warning --display-info "$out"/roomcast-*_"$debversion"_"$arch".deb
  echo "deb: lintian clean" >&2
fi
