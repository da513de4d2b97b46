#!/usr/bin/env bash
# Installs the Debian packages Roomcast needs to build, test and run. Idempotent:
# it asks apt only for what is missing, so a second run is quick and offline.
set -euo pipefail
# With CI=true or ROOMCAST_HOME_ASSISTANT=1, also (once) the Home Assistant the HA tests run against.
case "${CI:-}:${ROOMCAST_HOME_ASSISTANT:-}" in true:*|True:*|TRUE:*|1:*|*:1) trap 'bash "$(dirname "$0")/setup-home-assistant.sh" >/dev/null || exit 1' EXIT ;; esac

packages=(
  libmosquitto-dev libbluetooth-dev libyaml-dev libssl-dev pkg-config
  mosquitto mosquitto-clients bluez bluez-test-tools openssl iproute2
  # scripts/lib/broker.sh picks the private broker's free port with it.
  python3
  # the dashboard and metrics tests: a real browser and a real Prometheus.
  chromium fonts-dejavu-core prometheus
  # make dist / deb / package-test: objcopy, dpkg-shlibdeps, lintian, a clean root, systemd-analyze.
  binutils dpkg-dev lintian debootstrap systemd
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2

# The Debian package enables and starts a system-wide broker on port 1883 where
# systemd runs. Roomcast's tests start their own brokers on free ports and do
# not need it; we leave it as the package set it up.
