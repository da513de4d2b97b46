#!/usr/bin/env bash
# Installs a Home Assistant that the HomeAssistantTests run against: a virtualenv with that release
# and every package pinned in scripts/home-assistant-<version>-constraints.txt (paho-mqtt among them,
# so HA never installs anything when it starts). Versions: 2024.3.3 (Python 3.11 or 3.12, the
# default) and 2025.4.4 (Python 3.13). Idempotent: a second run with the same pins only prints where
# the virtualenv is.
#
#   scripts/setup-home-assistant.sh [VERSION]
#   ROOMCAST_HA_VENV    where to put it (default ~/.cache/roomcast/ha-<version>)
#   ROOMCAST_HA_PYTHON  the interpreter (default: the first supported python3.x on PATH or in pyenv)
#
# Prints the virtualenv's path as the last line of stdout. Exits 69 when no Python the release
# supports is found.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-2024.3.3}
pins=scripts/home-assistant-$version-constraints.txt
case "$version" in
  2024.3.3) minor_lo=11; minor_hi=12 ;;
  2025.4.4) minor_lo=13; minor_hi=13 ;;
  *) echo "setup-home-assistant: no pins for Home Assistant $version (have: 2024.3.3, 2025.4.4)" >&2; exit 64 ;;
esac
venv=${ROOMCAST_HA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/roomcast/ha-$version}
stamp="$venv/.roomcast-pins"
want=$(sha256sum "$pins" | cut -d' ' -f1)

if [ -x "$venv/bin/hass" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$venv"
  exit 0
fi

supported() { "$1" -c "import sys; sys.exit(0 if (3, $minor_lo) <= sys.version_info[:2] <= (3, $minor_hi) else 1)" 2>/dev/null; }
python=${ROOMCAST_HA_PYTHON:-}
if [ -z "$python" ]; then
  candidates=()
  for m in $(seq "$minor_lo" "$minor_hi"); do candidates+=("python3.$m"); done
  candidates+=(python3)
  # pyenv's interpreters, which are not on PATH unless a shim selects them.
  pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
  for m in $(seq "$minor_lo" "$minor_hi"); do
    for p in "$pyenv_root"/versions/3."$m".*/bin/python3; do [ -x "$p" ] && candidates+=("$p"); done
  done
  for candidate in "${candidates[@]}"; do
    if command -v "$candidate" >/dev/null && supported "$candidate"; then python=$candidate; break; fi
  done
fi
if [ -z "$python" ] || ! supported "$python"; then
  echo "setup-home-assistant: Home Assistant $version needs Python 3.$minor_lo…3.$minor_hi (set ROOMCAST_HA_PYTHON)" >&2
  exit 69  # EX_UNAVAILABLE: `make home-assistant` leaves this release out, outside CI
fi

# Debian's own Python needs python3-venv for `-m venv`.
if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  echo "setup-home-assistant: installing python3-venv" >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends python3-venv >&2
fi

echo "setup-home-assistant: installing Home Assistant $version into $venv (a few minutes)" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --requirement "$pins" >&2
"$venv/bin/python" -c "import homeassistant.const as c; assert c.__version__ == '$version', c.__version__"
echo "$want" > "$stamp"
echo "$venv"
