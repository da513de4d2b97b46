#!/usr/bin/env bash
# version.sh: the Debian version of the packages make deb builds from this tree, on stdout; with
# --date, also the time it stands for (seconds since the epoch) on a second line.
# A commit tagged v<version> (the program's own version, RoomcastVersion.current, what --version
# prints), or a tree outside git, is <version> as it is, dated by deploy/debian/changelog's last
# entry. Any other commit is a snapshot, dated by its commit time (UTC) and named by its first
# seven hex digits: <version>~git<date>.<time>.<commit> on the way to <version>, which it sorts
# before, or <version>+git<date>.<time>.<commit> after <version> was tagged and before the version
# is raised, which it sorts after. Either sorts after every earlier snapshot, so apt takes each build
# as an upgrade of the one before. (With one version for every build, `apt install` of a newer
# build said "already the newest version" and installed nothing.)
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/Shared/Model/RoomcastVersion.swift)
released=$(date -d "$(sed -n 's/^ -- .*>  //p' deploy/debian/changelog | head -1)" +%s)
release() {
  echo "$version"
  [ "${1:-}" != --date ] || echo "$released"
}
# A git checkout git cannot read (not installed, or a repository it will not trust for this user)
# is said, not built as the release.
[ -e .git ] || { release "$@"; exit 0; }
commit=$(git rev-parse HEAD) || { echo "version.sh: git cannot read this checkout (run git status for why)" >&2; exit 1; }
if git describe --exact-match --tags --match "v$version" HEAD > /dev/null 2>&1; then
  release "$@"
  exit 0
fi
at=$(git log -1 --format=%ct HEAD)
after="~"
if git describe --tags --match "v$version" --abbrev=0 HEAD > /dev/null 2>&1; then after="+"; fi
echo "$version${after}git$(date -u -d "@$at" +%Y%m%d.%H%M%S).${commit:0:7}"
[ "${1:-}" != --date ] || echo "$at"
