#!/usr/bin/env bash
# make package-test: the packages of make deb in a clean Debian root (debootstrap), as a user gets
# them. Installs all six with dpkg -i; checks the roomcast user, the conffiles and their mode, the
# debug files, `systemd-analyze verify` and `security` on the installed units, and runs smoke.sh
# (--version, a whole replay, config errors) on /usr/bin, plus a replay with the shipped configs as
# the roomcast user; installs again (what an upgrade runs) and checks nothing changed; enables both
# units as an admin would; then removes (programs gone, conffiles kept) and purges, and checks that
# no file is left that was not there before (docs/deployment.md).
#
# The root is a minbase bookworm with the packages' Depends; the first run debootstraps it (about a
# minute and 80 MB from the mirror) and keeps a tar of it under ~/.cache/roomcast/, which later
# runs unpack in seconds (renewed after 30 days). DEBIAN_MIRROR picks the mirror.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${DEB_OUT:-build/deb}
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/Shared/Model/RoomcastVersion.swift)
arch=$(dpkg --print-architecture)
# The packages' version as make deb wrote it (one build is there: make deb removes earlier ones).
built=("$out"/roomcast-aggregator_*_"$arch".deb)
[ -f "${built[0]}" ] && [ ${#built[@]} -eq 1 ] || { echo "test-debs: FAIL: not one roomcast-aggregator package in $out: run make deb" >&2; exit 1; }
debversion=$(dpkg-deb -f "${built[0]}" Version)
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(roomcast-edge-agent roomcast-aggregator roomcast-sim)
fail() { echo "test-debs: FAIL: $*" >&2; exit 1; }
ok() { echo "test-debs: ok: $*" >&2; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot)"
command -v debootstrap > /dev/null || fail "debootstrap is not installed: apt install debootstrap, or scripts/setup.sh"
debs=()
for p in "${packages[@]}"; do
  for f in "$out/${p}_${debversion}_${arch}.deb" "$out/${p}-dbgsym_${debversion}_${arch}.deb"; do
    [ -f "$f" ] || fail "$f is missing: run make deb"
    debs+=("$f")
  done
done

# Depends names the package of every library each program loads. The root below has those
# libraries already (debootstrap's --include), so installing there could not tell.
for pair in roomcast-edge-agent:edge-agent roomcast-aggregator:aggregator roomcast-sim:roomcast-sim; do
  pkg=${pair%%:*} program=${pair#*:}
  deb="$out/${pkg}_${debversion}_${arch}.deb"
  depends=" $(dpkg-deb -f "$deb" Depends | tr ',|' '  ') "
  unpacked=$(mktemp -d)
  dpkg-deb -x "$deb" "$unpacked"
  for soname in $(readelf -d "$unpacked/usr/bin/$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    # Every installed package of this architecture with a file of that name (multilib packages
    # such as lib32stdc++6 hold the same names): one of them must be a dependency.
    owners=$(dpkg -S "*/$soname" 2> /dev/null | grep ":$arch: " | cut -d: -f1 | sort -u || true)
    [ -n "$owners" ] || { rm -rf "$unpacked"; fail "$program needs $soname, which no installed $arch package holds"; }
    found=
    for owner in $owners; do case "$depends" in *" $owner "*) found=$owner ;; esac; done
    [ -n "$found" ] || { rm -rf "$unpacked"; fail "$pkg depends on none of $(echo $owners) ($program needs $soname)"; }
  done
  rm -rf "$unpacked"
done
ok "each package depends on the packages of the libraries its program loads"

# What the packages need from Debian (their Depends) and what the test runs there (systemd-analyze).
include=adduser,systemd,libmosquitto1,libbluetooth3,libyaml-0-2,libssl3
cache=${XDG_CACHE_HOME:-$HOME/.cache}/roomcast
seed=$cache/debootstrap-$suite-$arch-$(echo "$mirror $include" | md5sum | cut -c1-8).tar
work=$(mktemp -d /var/tmp/roomcast-package-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$cache" "$root"
if [ -f "$seed" ] && [ -z "$(find "$seed" -mtime +30)" ]; then
  tar -C "$root" --numeric-owner -xf "$seed"
  ok "clean $suite root unpacked from $seed"
else
  debootstrap --variant=minbase --include="$include" "$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; fail "debootstrap $suite from $mirror failed"; }
  tar -C "$root" --numeric-owner -cf "$seed.partial" . && mv "$seed.partial" "$seed"
  ok "clean $suite root made by debootstrap, kept as $seed"
fi

mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"
cp scripts/package/smoke.sh "$root/tmp/smoke.sh"

# Everything below runs in a private mount namespace: /proc, mounted for the programs, goes away
# with it whatever happens.
# A snapshot on the way to a release sorts before it (apt upgrades it to that release), one after
# it after it; either after an older snapshot of its kind.
case "$debversion" in
  "$version~git"*) dpkg --compare-versions "$debversion" lt "$version" || fail "snapshot $debversion does not sort before $version"
                   dpkg --compare-versions "$debversion" gt "$version~git20000101.000000.0000000" || fail "snapshot $debversion sorts before an older one" ;;
  "$version+git"*) dpkg --compare-versions "$debversion" gt "$version" || fail "snapshot $debversion does not sort after $version"
                   dpkg --compare-versions "$debversion" gt "$version+git20000101.000000.0000000" || fail "snapshot $debversion sorts before an older one" ;;
  "$version") ;;
  *) fail "the packages are $debversion, neither $version nor a snapshot of it" ;;
esac

export version debversion root
unshare --mount --propagation private bash -euo pipefail -c '
fail() { echo "test-debs: FAIL: $*" >&2; exit 1; }
ok() { echo "test-debs: ok: $*" >&2; }
mount -t proc proc "$root/proc"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 "$@"; }
# Every file of the root but those dpkg, logs and caches keep for themselves.
files() { in_root find / -xdev \( -path /var/lib/dpkg -o -path /var/log -o -path /var/cache -o -path /tmp -o -path /run -o -path /proc \) -prune -o -print | LC_ALL=C sort; }
files > "$root/../before.txt"

in_root sh -c "dpkg -i /tmp/debs/*.deb" > "$root/../dpkg-install.log" 2>&1 || { cat "$root/../dpkg-install.log" >&2; fail "dpkg -i failed"; }
ok "dpkg -i of $(ls "$root/tmp/debs" | wc -l) packages"
[ "$(in_root dpkg-query -W -f "\${Version}" roomcast-aggregator)" = "$debversion" ] || fail "roomcast-aggregator is installed as another version than $debversion"
in_root sh -c "zcat /usr/share/doc/roomcast-aggregator/changelog.gz | head -1" | grep -F "roomcast ($debversion)" > /dev/null || fail "the changelog does not begin with $debversion"

entry=$(in_root getent passwd roomcast) || fail "no roomcast user after installation"
uid=$(cut -d: -f3 <<< "$entry")
[ "$uid" -lt 1000 ] || fail "roomcast is not a system user (uid $uid)"
[ "$(cut -d: -f7 <<< "$entry")" = /usr/sbin/nologin ] || fail "roomcast has a login shell: $entry"
in_root getent group roomcast > /dev/null || fail "no roomcast group"
ok "system user roomcast (uid $uid, nologin) and its group"

for pair in roomcast-edge-agent:/etc/roomcast/agent.yaml roomcast-aggregator:/etc/roomcast/aggregator.yaml; do
  pkg=${pair%%:*} conffile=${pair#*:}
  in_root dpkg-query -W -f="\${Conffiles}\n" "$pkg" | grep -q " $conffile " || fail "$conffile is not a conffile of $pkg"
  [ "$(in_root stat -c "%U:%G %a" "$conffile")" = "root:roomcast 640" ] \
    || fail "$conffile is $(in_root stat -c "%U:%G %a" "$conffile"), expected root:roomcast 640"
done
ok "agent.yaml and aggregator.yaml are conffiles, root:roomcast 0640"

for p in edge-agent aggregator roomcast-sim; do
  id=$(readelf -n "$root/usr/bin/$p" 2> /dev/null | sed -n "s/.*Build ID: //p" || true)
  [ -n "$id" ] && [ -f "$root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] \
    || fail "no /usr/lib/debug/.build-id file for /usr/bin/$p ($id)"
done
ok "each program'"'"'s .debug file is under /usr/lib/debug/.build-id/"

for p in edge-agent aggregator roomcast-sim; do
  in_root zcat "/usr/share/man/man1/$p.1.gz" | grep -q "^\.TH" || fail "no man page for $p"
done
# --man=no: the root has no man-db to look the units'"'"' Documentation= pages up with (they exist: above).
for unit in roomcast-edge-agent.service roomcast-aggregator.service; do
  in_root systemd-analyze verify --man=no "/lib/systemd/system/$unit" > "$root/../verify.log" 2>&1 \
    || { cat "$root/../verify.log" >&2; fail "systemd-analyze verify $unit"; }
  [ ! -s "$root/../verify.log" ] || { cat "$root/../verify.log" >&2; fail "systemd-analyze verify $unit complains"; }
  level=$(in_root systemd-analyze security --offline=true --no-pager "/lib/systemd/system/$unit" | sed -n "s/.*Overall exposure level for [^:]*: //p")
  case "$level" in *" OK "*|*" SAFE "*|*" PERFECT "*) ;; *) fail "$unit exposure: $level" ;; esac
  ok "$unit: systemd-analyze verify clean, exposure $level"
done

in_root bash /tmp/smoke.sh /usr/bin "$version"

# The shipped configs load, read as the service user reads them, and drive a replay.
in_root roomcast-sim generate --layout cottage --seed 4 --duration 10 --no-configs --out /tmp/home > /dev/null 2>&1
capture=$(ls "$root"/tmp/home/nodes/*.btsnoop | head -1)
in_root setpriv --reuid=roomcast --regid=roomcast --init-groups edge-agent run --config /etc/roomcast/agent.yaml \
  --source "btsnoop:${capture#$root}" --speed max --dry-run > "$root/tmp/readings.jsonl" 2> "$root/../agent.log" \
  || { cat "$root/../agent.log" >&2; fail "edge-agent with /etc/roomcast/agent.yaml as roomcast"; }
in_root setpriv --reuid=roomcast --regid=roomcast --init-groups aggregator replay --config /etc/roomcast/aggregator.yaml \
  /tmp/readings.jsonl > /dev/null 2> "$root/../aggregator.log" \
  || { cat "$root/../aggregator.log" >&2; fail "aggregator replay with /etc/roomcast/aggregator.yaml as roomcast"; }
ok "the shipped configs load as user roomcast and replay a capture"
rm -rf "$root/tmp/home" "$root/tmp/readings.jsonl"

# Installing again (what an upgrade runs: postinst configure with the old version) changes nothing.
in_root sh -c "dpkg -i /tmp/debs/*.deb" > "$root/../dpkg-reinstall.log" 2>&1 || { cat "$root/../dpkg-reinstall.log" >&2; fail "dpkg -i a second time failed"; }
[ "$(in_root getent passwd roomcast)" = "$entry" ] || fail "reinstalling changed the roomcast user"
[ "$(in_root stat -c "%U:%G %a" /etc/roomcast/agent.yaml)" = "root:roomcast 640" ] || fail "reinstalling changed agent.yaml'"'"'s mode"
ok "installing again keeps the user and the conffiles'"'"' mode"

# An upgrade over a config the new version refuses (a key renamed since it was written): dpkg
# succeeds, the problem is said with its path, and the running service is not restarted into it.
# systemd is taken as running (/run/systemd/system), with stand-ins for systemctl and
# deb-systemd-invoke first on the PATH that note what they are asked: a try-restart is asked only
# over a config that passes.
in_root mkdir -p /run/systemd/system
for stub in systemctl deb-systemd-invoke; do
  in_root sh -c "printf \"#!/bin/sh\\necho $stub \\\"\\\$*\\\" >> /tmp/invoked.log\\n\" > /usr/sbin/$stub && chmod 0755 /usr/sbin/$stub"
done
in_root cp /etc/roomcast/aggregator.yaml /tmp/aggregator.yaml.good
in_root sh -c "printf \"presence_timeout_s: 30\\n\" >> /etc/roomcast/aggregator.yaml"
in_root sh -c "dpkg -i /tmp/debs/roomcast-aggregator_*.deb" > "$root/../dpkg-upgrade.log" 2>&1 \
  || { cat "$root/../dpkg-upgrade.log" >&2; fail "dpkg -i over a config the package refuses failed"; }
grep -q "/etc/roomcast/aggregator.yaml does not pass this version" "$root/../dpkg-upgrade.log" \
  || { cat "$root/../dpkg-upgrade.log" >&2; fail "the upgrade did not say the config does not pass"; }
grep -q "presence_timeout_s" "$root/../dpkg-upgrade.log" || { cat "$root/../dpkg-upgrade.log" >&2; fail "the upgrade did not name the key it refuses"; }
grep -q "daemon-reload" "$root/tmp/invoked.log" || fail "the stand-ins were not used: $(cat "$root/tmp/invoked.log")"
! grep -q "try-restart" "$root/tmp/invoked.log" || fail "a try-restart was asked over a refused config: $(cat "$root/tmp/invoked.log")"
in_root cp /tmp/aggregator.yaml.good /etc/roomcast/aggregator.yaml
in_root rm /tmp/aggregator.yaml.good /tmp/invoked.log
in_root sh -c "dpkg -i /tmp/debs/roomcast-aggregator_*.deb" > "$root/../dpkg-upgrade.log" 2>&1 \
  || { cat "$root/../dpkg-upgrade.log" >&2; fail "dpkg -i over the shipped config failed"; }
! grep -q "does not pass" "$root/../dpkg-upgrade.log" || { cat "$root/../dpkg-upgrade.log" >&2; fail "the shipped config did not pass the upgrade check"; }
grep -q "deb-systemd-invoke try-restart roomcast-aggregator.service" "$root/tmp/invoked.log" \
  || fail "no try-restart over the shipped config: $(cat "$root/tmp/invoked.log")"
in_root rm /usr/sbin/systemctl /usr/sbin/deb-systemd-invoke /tmp/invoked.log
in_root rmdir /run/systemd/system
ok "an upgrade over a refused config says its problems and asks no restart; over a good one it asks one"

# As an admin would once the configs are edited; purge must take the symlinks away.
in_root systemctl enable roomcast-edge-agent.service roomcast-aggregator.service > /dev/null 2>&1
[ -L "$root/etc/systemd/system/multi-user.target.wants/roomcast-aggregator.service" ] || fail "systemctl enable made no symlink"
# What systemd makes when a service first starts (StateDirectory=roomcast), with something in it.
in_root install -d -o roomcast -g roomcast -m 0750 /var/lib/roomcast
in_root setpriv --reuid=roomcast --regid=roomcast --init-groups touch /var/lib/roomcast/state
# The broker passwords as the units say to keep them: purge takes them too.
in_root install -m 0600 /dev/null /etc/roomcast/agent.env
in_root install -m 0600 /dev/null /etc/roomcast/aggregator.env
# What `edge-agent irks import --write` leaves beside agent.yaml: purge takes it too.
in_root install -m 0640 /dev/null /etc/roomcast/agent.yaml.bak

in_root dpkg --remove roomcast-sim-dbgsym roomcast-aggregator-dbgsym roomcast-edge-agent-dbgsym roomcast-sim roomcast-aggregator roomcast-edge-agent > "$root/../dpkg-remove.log" 2>&1 \
  || { cat "$root/../dpkg-remove.log" >&2; fail "dpkg --remove failed"; }
for f in /usr/bin/edge-agent /usr/bin/aggregator /usr/bin/roomcast-sim /lib/systemd/system/roomcast-edge-agent.service; do
  [ ! -e "$root$f" ] || fail "$f is left after dpkg --remove"
done
[ -f "$root/etc/roomcast/agent.yaml" ] && [ -f "$root/etc/roomcast/aggregator.yaml" ] || fail "dpkg --remove took the conffiles"
[ -f "$root/var/lib/roomcast/state" ] || fail "dpkg --remove took the state directory"
ok "dpkg --remove: programs and units gone, conffiles and state kept"

in_root dpkg --purge roomcast-edge-agent roomcast-aggregator roomcast-sim roomcast-sim-dbgsym roomcast-aggregator-dbgsym roomcast-edge-agent-dbgsym > "$root/../dpkg-purge.log" 2>&1 \
  || { cat "$root/../dpkg-purge.log" >&2; fail "dpkg --purge failed"; }
files > "$root/../after.txt"
# Left on purpose: adduser'"'"'s backups of the account files (the roomcast user stays; see postrm).
left=$(LC_ALL=C comm -13 "$root/../before.txt" "$root/../after.txt" | grep -vxE "/etc/(passwd|group|shadow|gshadow)-" || true)
[ -z "$left" ] || fail "left after purge: $left"
in_root getent passwd roomcast > /dev/null || fail "the roomcast user was removed (the packages keep it)"
ok "dpkg --purge: no file left (the roomcast user stays, by design)"
'
