#!/usr/bin/env bash
# fake-gcs-server, the Google Cloud Storage emulator, for the gcs adapter's
# tests, on 127.0.0.1 only; scripts/test-servers calls it.
#
#   scripts/servers/fake-gcs.sh start  [STATE [CACHE]]   build once, start (or reuse), create the bucket
#   scripts/servers/fake-gcs.sh stop   [STATE]           stop the server this script started
#   scripts/servers/fake-gcs.sh status [STATE]           exit 0 if it runs
#
# STATE is the state directory (default $DIST_TEST_DIR, else .test-servers/
# at the repository root); the server's files are in STATE/gcs, and
# STATE/gcs/env exports DISTRIBUTOR_TEST_GCS_ENDPOINT (the JSON API's base
# URL, http://127.0.0.1:PORT/storage/v1/) and DISTRIBUTOR_TEST_GCS_BUCKET.
# CACHE (default $DIST_TEST_CACHE, else ~/.cache/distributor-test) holds
# the binary, built once with `go install` from the Go module proxy. The
# memory backend keeps nothing across restarts. v1.56 is the first release
# that enforces ifGenerationMatch on simple (uploadType=media) uploads.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
state=${2:-${DIST_TEST_DIR:-$repo/.test-servers}}
cache=${3:-${DIST_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/distributor-test}}
version=v1.56.1
bucket=distributor-test
d=$state/gcs

log() { echo "test-servers: gcs: $*" >&2; }
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

stop() {
  if alive "$d/fake-gcs-server.pid"; then
    local pid
    pid=$(cat "$d/fake-gcs-server.pid")
    kill "$pid" 2>/dev/null
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null
  fi
  rm -f "$d/fake-gcs-server.pid" "$d/env"
}

build() {
  local bin=$cache/bin/fake-gcs-server
  if [ -x "$bin" ] && [ "$(cat "$bin.version" 2>/dev/null)" = "$version" ]; then
    echo "$bin"
    return 0
  fi
  command -v go >/dev/null || { log "go is not installed"; return 1; }
  mkdir -p "$cache/bin"
  log "building fake-gcs-server $version (once; cached in $cache/bin)"
  # GOFLAGS/GOWORK from the caller must not leak into a foreign module build.
  if ! (cd "$cache" && GOFLAGS= GOWORK=off GOBIN="$cache/bin" \
    go install -ldflags="-s -w" "github.com/fsouza/fake-gcs-server@$version") >"$d/build.log" 2>&1; then
    log "building fake-gcs-server failed (see $d/build.log)"
    return 1
  fi
  echo "$version" >"$bin.version"
  echo "$bin"
}

start() {
  mkdir -p "$d" || return 1
  if alive "$d/fake-gcs-server.pid" && [ -s "$d/env" ] && listening "$(cat "$d/port")"; then
    log "reusing fake-gcs-server on 127.0.0.1:$(cat "$d/port")"
    return 0
  fi
  stop
  local bin port=
  bin=$(build) || return 1
  for _ in 1 2 3; do
    local p=$((20000 + RANDOM % 40000))
    listening "$p" && continue
    "$bin" -scheme http -host 127.0.0.1 -port "$p" -backend memory -public-host "127.0.0.1:$p" \
      -log-level warn >"$d/fake-gcs-server.log" 2>&1 </dev/null &
    echo $! >"$d/fake-gcs-server.pid"
    for _ in $(seq 1 100); do
      listening "$p" && { port=$p; break 2; }
      alive "$d/fake-gcs-server.pid" || break
      sleep 0.1
    done
    log "fake-gcs-server did not come up on port $p (see $d/fake-gcs-server.log)"
    stop
  done
  [ -n "$port" ] || return 1
  echo "$port" >"$d/port"
  local code
  code=$(curl -sS -o "$d/create-bucket.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d "{\"name\":\"$bucket\"}" "http://127.0.0.1:$port/storage/v1/b?project=distributor-test")
  case $code in
  200 | 409) ;;
  *)
    log "creating bucket $bucket: HTTP $code: $(cat "$d/create-bucket.out")"
    stop
    return 1
    ;;
  esac
  cat >"$d/env" <<EOT
export DISTRIBUTOR_TEST_GCS_ENDPOINT=http://127.0.0.1:$port/storage/v1/
export DISTRIBUTOR_TEST_GCS_BUCKET=$bucket
EOT
  log "fake-gcs-server on 127.0.0.1:$port, bucket $bucket"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) alive "$d/fake-gcs-server.pid" ;;
*)
  echo "usage: scripts/servers/fake-gcs.sh start|stop|status [STATE [CACHE]]" >&2
  exit 2
  ;;
esac
