#!/usr/bin/env bash
# version.sh: the Debian version of the packages make deb builds from this tree, on stdout; with
# --date, also the time it stands for (seconds since the epoch) on a second line.
# A commit tagged v<version> (the program's own version, RoomcastVersion.current, what --version
# prints), or a tree outside git, is <version> as it is, dated by deploy/debian/changelog's last
# entry. Any other commit is a snapshot of the version under way, <version>~git<date>.<time>.<hash>
# of its commit time (UTC): it sorts before <version> and after every earlier snapshot, so apt takes
# each build as an upgrade of the one before. (With one version for every build, `apt install` of a
# newer build said "already the newest version" and installed nothing.)
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/Shared/Model/RoomcastVersion.swift)
released=$(date -d "$(sed -n 's/^ -- .*>  //p' deploy/debian/changelog | head -1)" +%s)
if commit=$(git log -1 --format='%ct %h' 2> /dev/null) && [ -n "$commit" ] \
   && ! git describe --exact-match --tags --match "v$version" > /dev/null 2>&1; then
  read -r at hash <<< "$commit"
  echo "$version~git$(date -u -d "@$at" +%Y%m%d.%H%M%S).$hash"
  [ "${1:-}" != --date ] || echo "$at"
else
  echo "$version"
  [ "${1:-}" != --date ] || echo "$released"
fi
