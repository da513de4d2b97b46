#!/usr/bin/env bash
# Installs the Debian packages Roomcast needs. Idempotent: it asks apt only for what is missing,
# so a second run is quick and offline.
#
#   scripts/setup.sh [GROUP...]    (no group: all of them)
#     build    the C libraries the programs link (make build, make release)
#     run      what the demo runs beside them: a broker (make demo)
#     package  make dist / deb / package-test: objcopy, dpkg-shlibdeps, lintian, a clean root,
#              systemd-analyze
#     test     everything the tests use (make test): the above, and the radio emulation, a browser
#              and a Prometheus
# Building a package on a Pi installs no test servers: Debian's prometheus package, for one,
# starts a server on port 9090 of every interface.
set -euo pipefail

build=(libmosquitto-dev libbluetooth-dev libyaml-dev libssl-dev pkg-config)
# scripts/lib/broker.sh picks the private broker's free port with python3.
run=(mosquitto python3)
package=(binutils dpkg-dev lintian debootstrap systemd)
# The dashboard and metrics tests: a real browser and a real Prometheus.
test=("${build[@]}" "${run[@]}" "${package[@]}" mosquitto-clients bluez bluez-test-tools openssl iproute2
      chromium fonts-dejavu-core prometheus)

packages=()
for group in "${@:-test}"; do
  case "$group" in
    build) packages+=("${build[@]}") ;;
    run) packages+=("${run[@]}") ;;
    package) packages+=("${package[@]}") ;;
    test|all) packages+=("${test[@]}") ;;
    *) echo "setup: no group '$group' (have: build, run, package, test)" >&2; exit 64 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    case " ${missing[*]} " in *" $p "*) ;; *) missing+=("$p") ;; esac
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
