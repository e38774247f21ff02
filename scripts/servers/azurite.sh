#!/usr/bin/env bash
# Azurite, Microsoft's Azure Storage emulator (its Blob service only), for
# the azure adapter's tests, on 127.0.0.1.
#
# scripts/test-servers sources this file and calls start_azurite,
# stop_azurite and azurite_alive; $state/azurite/env is its part of the env
# file:
#   DISTRIBUTOR_TEST_AZURE_ENDPOINT, _ACCOUNT, _KEY, _CONTAINER
# The tests create the container when it is missing (the REST call needs a
# Shared Key signature).
#
# Run directly, it manages an instance of its own:
#   DIST_TEST_DIR=/tmp/me scripts/servers/azurite.sh start|stop|status
#
# Azurite comes from npm (azurite@3.35.0: 3.36 and later need a newer Node
# than 20), installed once into $cache/azurite. --disableTelemetry keeps it
# from reaching a telemetry host; --skipApiVersionCheck lets a newer SDK
# talk to it; --loose ignores headers it does not know.

azurite_version=3.35.0
azurite_account=devstoreaccount1
# The emulator's published, well-known account key (not a secret).
azurite_key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
azurite_container=distributor-test

# ensure_azurite prints the path of azurite-blob, installing it if needed.
ensure_azurite() {
  local dir=$cache/azurite bin=$cache/azurite/node_modules/.bin/azurite-blob
  if [ -x "$bin" ] && [ "$(cat "$dir/version" 2>/dev/null)" = "$azurite_version" ]; then
    echo "$bin"
    return 0
  fi
  command -v npm >/dev/null || { log "npm is not installed (Azurite needs Node.js 20)"; return 1; }
  mkdir -p "$dir"
  log "installing azurite $azurite_version from npm (once; cached in $dir)"
  if ! npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "azurite@$azurite_version" \
    >"$state/azurite-install.log" 2>&1; then
    log "npm install azurite failed (see $state/azurite-install.log)"
    return 1
  fi
  echo "$azurite_version" >"$dir/version"
  echo "$bin"
}

start_azurite() {
  local d=$state/azurite
  mkdir -p "$d"
  if alive "$d/azurite.pid" && [ -s "$d/env" ] && listening "$(cat "$d/port")"; then
    log "azurite: reusing Azurite on 127.0.0.1:$(cat "$d/port")"
    return 0
  fi
  stop_pid "$d/azurite.pid"
  rm -f "$d/env"
  local bin port
  bin=$(ensure_azurite) || return 1
  # In memory, fresh at every start: an on-disk store grown by many runs
  # (hundreds of MB of leftover blobs) was seen to stop answering PUTs.
  rm -rf "$d/data"
  for _ in 1 2 3; do
    port=$(free_port) || return 1
    (cd "$d" && exec "$bin" --blobHost 127.0.0.1 --blobPort "$port" \
      --inMemoryPersistence --extentMemoryLimit 4096 \
      --skipApiVersionCheck --loose --disableTelemetry --silent \
      >"$d/azurite.log" 2>&1 </dev/null) &
    echo $! >"$d/azurite.pid"
    if wait_port "$port" "$d/azurite.pid" 30; then
      break
    fi
    log "azurite: did not come up on port $port (see $d/azurite.log)"
    stop_pid "$d/azurite.pid"
    port=
  done
  [ -n "$port" ] || return 1
  echo "$port" >"$d/port"
  cat >"$d/env" <<ENV
export DISTRIBUTOR_TEST_AZURE_ENDPOINT=http://127.0.0.1:$port/$azurite_account
export DISTRIBUTOR_TEST_AZURE_ACCOUNT=$azurite_account
export DISTRIBUTOR_TEST_AZURE_KEY=$azurite_key
export DISTRIBUTOR_TEST_AZURE_CONTAINER=$azurite_container
ENV
  log "azurite: Azurite blob service on 127.0.0.1:$port, account $azurite_account"
}

stop_azurite() {
  stop_pid "$state/azurite/azurite.pid"
  rm -f "$state/azurite/env"
}

azurite_alive() { alive "$state/azurite/azurite.pid"; }

# Run directly: the helpers scripts/test-servers would provide, then the
# command.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  repo=$(cd "$(dirname "$0")/../.." && pwd)
  state=${DIST_TEST_DIR:-$repo/.test-servers}
  cache=${DIST_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/distributor-test}
  log() { echo "azurite.sh: $*" >&2; }
  alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
  listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
  free_port() { local p; for _ in $(seq 1 50); do p=$((20000 + RANDOM % 40000)); listening "$p" || { echo "$p"; return 0; }; done; return 1; }
  wait_port() {
    local deadline=$((SECONDS + $3))
    while [ $SECONDS -lt $deadline ]; do listening "$1" && return 0; alive "$2" || return 1; sleep 0.1; done
    return 1
  }
  stop_pid() {
    alive "$1" && { kill "$(cat "$1")"; sleep 0.5; kill -9 "$(cat "$1")" 2>/dev/null; }
    rm -f "$1"
  }
  mkdir -p "$state"
  case ${1:-start} in
  start) start_azurite && cat "$state/azurite/env" ;;
  stop) stop_azurite ;;
  status) azurite_alive && cat "$state/azurite/env" ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
  esac
fi
