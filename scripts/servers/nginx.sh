#!/usr/bin/env bash
# nginx with the brotli_static module, for the tests of precompressed
# outputs (spec 3.4: nginx gzip_static/brotli_static serve the P.gz and
# P.br sidecars); scripts/test-servers calls it.
#
#   scripts/servers/nginx.sh [STATE]
#
# Only installs, with apt-get when missing: Debian's nginx and
# libnginx-mod-http-brotli-static (bookworm: nginx 1.22.1,
# libnginx-mod-http-brotli-static 1.0.0~rc-3). No server is left running:
# each test starts a private nginx of its own (internal/testutil/nginxtest),
# and the package's own service is kept from starting on port 80 (a
# policy-rc.d that denies it during the install, where none exists; the
# service stopped after the install if it started all the same). STATE
# (default $DIST_TEST_DIR, else .test-servers/ at the repository root) gets
# the apt-get log, STATE/apt-nginx.log. A failed install is a warning (the
# tests that need nginx skip), and a failure under CI=true (they would fail).
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
state=${1:-${DIST_TEST_DIR:-$repo/.test-servers}}
module=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so
pkgs="nginx libnginx-mod-http-brotli-static"

log() { echo "test-servers: nginx: $*" >&2; }

fail() {
  if [ "${CI:-}" = true ]; then
    log "error: $* (the precompressed-output tests fail under CI)"
    exit 1
  fi
  log "warning: $* (the precompressed-output tests skip)"
  exit 0
}

installed() { [ -x /usr/sbin/nginx ] && [ -e "$module" ]; }

installed && exit 0
[ "$(id -u)" = 0 ] || fail "nginx or its brotli_static module is missing and installing $pkgs needs root"
command -v apt-get >/dev/null || fail "nginx is missing and there is no apt-get to install $pkgs"
mkdir -p "$state" || fail "cannot create the state directory $state"
log "installing $pkgs"
# invoke-rc.d asks policy-rc.d before it starts a service: 101 denies it.
policy=/usr/sbin/policy-rc.d
ours=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# scripts/servers/nginx.sh: no service starts during its apt-get.\nexit 101\n' >"$policy" &&
    chmod 755 "$policy" && ours=true
fi
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs; } >"$state/apt-nginx.log" 2>&1
rc=$?
$ours && rm -f "$policy"
# Where a service started anyway (an older policy-rc.d that allows it):
# the package's nginx, just installed, is not ours to keep.
if [ -s /run/nginx.pid ] && kill -0 "$(cat /run/nginx.pid)" 2>/dev/null; then
  log "stopping the nginx service the package started"
  /usr/sbin/nginx -s quit 2>/dev/null || kill "$(cat /run/nginx.pid)" 2>/dev/null
fi
[ "$rc" = 0 ] || fail "apt-get install $pkgs failed (see $state/apt-nginx.log)"
installed || fail "$pkgs installed, but /usr/sbin/nginx or $module is missing"
log "installed $(dpkg-query -W -f '${Package}=${Version} ' $pkgs)"
