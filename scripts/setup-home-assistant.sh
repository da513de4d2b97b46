#!/usr/bin/env bash
# Installs the Home Assistant that the HomeAssistantTests run against: a virtualenv with
# homeassistant 2024.3.3 and every package pinned in scripts/home-assistant-constraints.txt
# (including paho-mqtt and the frontend, so HA never installs anything when it starts).
# Idempotent: a second run with the same pins only prints where the virtualenv is.
#
#   ROOMCAST_HA_VENV    where to put it (default ~/.cache/roomcast/ha-2024.3.3)
#   ROOMCAST_HA_PYTHON  the interpreter (default: python3.11, python3.12 or python3 if 3.11/3.12)
#
# Prints the virtualenv's path as the last line of stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

version=2024.3.3
pins=scripts/home-assistant-constraints.txt
venv=${ROOMCAST_HA_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/roomcast/ha-$version}
stamp="$venv/.roomcast-pins"
want=$(sha256sum "$pins" | cut -d' ' -f1)

if [ -x "$venv/bin/hass" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$venv"
  exit 0
fi

# HA 2024.3 runs on Python 3.11 and 3.12 only.
supported() { "$1" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 12) else 1)' 2>/dev/null; }
python=${ROOMCAST_HA_PYTHON:-}
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3; do
    if command -v "$candidate" >/dev/null && supported "$candidate"; then python=$candidate; break; fi
  done
fi
if [ -z "$python" ] || ! supported "$python"; then
  echo "setup-home-assistant: Home Assistant $version needs Python 3.11 or 3.12 (set ROOMCAST_HA_PYTHON)" >&2
  exit 1
fi

# Debian's own Python needs python3-venv for `-m venv`.
if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  echo "setup-home-assistant: installing python3-venv" >&2
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends python3-venv >&2
fi

echo "setup-home-assistant: installing Home Assistant $version into $venv (about 2 minutes)" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --requirement "$pins" >&2
"$venv/bin/python" -c "import homeassistant.const as c; assert c.__version__ == '$version', c.__version__"
echo "$want" > "$stamp"
echo "$venv"
