# Sourced by scripts/demo.sh and scripts/soak.sh.
# start_private_broker <work dir>: starts a mosquitto on a free loopback port with a generated
# config (anonymous, no persistence), waits until it accepts connections, and sets
# `port`, `broker` (mqtt://127.0.0.1:<port>) and `broker_pid`.
start_private_broker() {
  local work=$1
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat > "$work/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
CONF
  # Started as root, mosquitto drops to user mosquitto unless told otherwise.
  [ "$(id -u)" -eq 0 ] && echo "user root" >> "$work/mosquitto.conf"
  # By its path: /usr/sbin is not on a Debian user's PATH.
  "${MOSQUITTO:-/usr/sbin/mosquitto}" -c "$work/mosquitto.conf" > "$work/mosquitto.log" 2>&1 &
  broker_pid=$!
  local listening=
  for _ in $(seq 50); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && { listening=1; break; }; sleep 0.1; done
  if [ -z "$listening" ]; then
    echo "mosquitto did not start listening on 127.0.0.1:$port:" >&2
    cat "$work/mosquitto.log" >&2
    return 1
  fi
  broker="mqtt://127.0.0.1:$port"
}
