#!/usr/bin/env bash
# FTP servers with explicit TLS (FTPS: AUTH TLS, then PROT P on every data
# connection, passive mode only) for the ftp adapter's tests, on 127.0.0.1.
#
# scripts/test-servers sources this file and calls start_ftp NAME for each
# NAME in $ftp_servers, stop_ftp and ftp_alive; $state/ftp-NAME/env is that
# server's part of the env file, with NAME in upper case and '-' as '_':
#   DISTRIBUTOR_TEST_FTP_<NAME>_ADDR, _USER, _PASSWORD, _CA, _ROOT, _PASV
# _CA is the CA that signed the servers' certificate (subjectAltName
# IP:127.0.0.1 and DNS:localhost, generated once per state directory with
# openssl), _ROOT the local directory the login sees as "/" (chrooted),
# owned by the login's uid, _PASV the first of the 1,000 passive data ports
# (tests proxy them, ftptest.Proxy).
#
#   vsftpd               vsftpd 3.0.3: local system user $ftp_user through a
#                        PAM service of its own (pam_unix); requires TLS
#                        session reuse on data connections (its default)
#   pureftpd             Pure-FTPd 1.0.50: a virtual user (pure-pw, puredb)
#   pureftpd-norename    the same with -G: renames are refused
#   proftpd              ProFTPD 1.3.8 mod_tls: a virtual user (AuthUserFile),
#                        AllowOverwrite on, TLS session reuse required; every
#                        command logged in commands.log (bench/run counts it)
#   proftpd-nooverwrite  the same with AllowOverwrite off
#
# Debian's FTP server packages conflict with each other, and proftpd-core
# (installed for the SFTP tests) must stay. So vsftpd and pure-ftpd are not
# installed: `apt-get download` fetches their .debs into $cache/debs, and
# their binaries run from the unpacked trees there; only their shared
# libraries are installed with apt-get when ldd misses one. The virtual
# users and the vsftpd login all map to the system user $ftp_user, whose
# password is the same for the five logins: random, made once, in
# $ftp_password (root only; like the user, one for the machine, not per
# state directory or cache).
# Needs root (chroot, setuid, useradd), as CI runs it.

ftp_servers="vsftpd pureftpd pureftpd-norename proftpd proftpd-nooverwrite"
ftp_user=distributor-ftp
ftp_pam_service=distributor-vsftpd
ftp_password=/var/lib/distributor-ftp/password
ftp_prepared= # "", ok or failed: the shared setup runs once per start

# ftp_apt_get ARGS...: apt-get ARGS, and again after apt-get update when it
# fails (a fresh machine has no package lists). Output goes to
# $state/apt-ftp.log.
ftp_apt_get() {
  export DEBIAN_FRONTEND=noninteractive
  { apt-get -qq "$@" || { apt-get update -qq && apt-get -qq "$@"; }; } >>"$state/apt-ftp.log" 2>&1
}

# ftp_unpack PKG BIN: unpacks Debian's PKG (downloaded, not installed) into
# $cache/debs/PKG once, installs the shared libraries that its binary BIN
# (a path inside the package) misses, and prints the directory.
ftp_unpack() {
  local pkg=$1 bin=$2 dir=$cache/debs/$1 deb
  if ! [ -x "$dir/$bin" ]; then
    mkdir -p "$cache/debs" || return 1
    rm -rf "$dir" "$dir.tmp" "$cache/debs/$pkg"_*.deb
    log "ftp: downloading $pkg (once; unpacked in $dir)"
    (cd "$cache/debs" && ftp_apt_get download "$pkg") || {
      log "ftp: apt-get download $pkg failed (see $state/apt-ftp.log)"
      return 1
    }
    deb=$(ls "$cache/debs/$pkg"_*.deb 2>/dev/null | head -n 1)
    [ -n "$deb" ] && dpkg-deb -x "$deb" "$dir.tmp" && mv "$dir.tmp" "$dir" || {
      log "ftp: unpacking $pkg failed"
      rm -rf "$dir.tmp"
      return 1
    }
  fi
  if ldd "$dir/$bin" | grep -q 'not found'; then
    # The libraries the package depends on (its Depends lines lib*).
    local libs
    libs=$(dpkg-deb -f "$cache/debs/$pkg"_*.deb Depends | tr ',|' '\n\n' |
      sed -n 's/^ *\(lib[^ (]*\).*/\1/p' | sort -u | tr '\n' ' ')
    log "ftp: installing the libraries of $pkg: $libs"
    ftp_apt_get install -y --no-install-recommends $libs || {
      log "ftp: apt-get install $libs failed (see $state/apt-ftp.log)"
      return 1
    }
    ! ldd "$dir/$bin" | grep 'not found' >&2 || return 1
  fi
  echo "$dir"
}

# ftp_tls: the CA and the server certificate of the five servers, made once
# per state directory.
ftp_tls() {
  [ -s "$state/ftp-ca.pem" ] && [ -s "$state/ftp-server.pem" ] && [ -s "$state/ftp-server.key" ] && return 0
  if ! command -v openssl >/dev/null; then
    log "ftp: installing openssl"
    ftp_apt_get install -y --no-install-recommends openssl || return 1
  fi
  local t=$state/ftp-tls.tmp
  rm -rf "$t" && mkdir -p "$t" || return 1
  printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >"$t/server.ext"
  if ! {
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=distributor test FTP CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout "$t/ca.key" -out "$t/ca.pem" &&
      openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$t/server.key" -out "$t/server.csr" &&
      openssl x509 -req -days 3650 -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" \
        -set_serial "0x$(openssl rand -hex 16)" -extfile "$t/server.ext" -out "$t/server.pem"
  } >"$t/openssl.log" 2>&1; then
    log "ftp: making the TLS certificates failed: $(tail -n 3 "$t/openssl.log")"
    return 1
  fi
  chmod 600 "$t/ca.key" "$t/server.key"
  mv "$t/ca.key" "$state/ftp-ca.key" && mv "$t/server.key" "$state/ftp-server.key" &&
    mv "$t/server.pem" "$state/ftp-server.pem" && mv "$t/ca.pem" "$state/ftp-ca.pem" && rm -rf "$t"
}

# ftp_account: the system user of every login, with the password of
# $ftp_password, and vsftpd's PAM service.
ftp_account() {
  # Home "/": vsftpd changes into the home before local_root, and fails
  # when it does not exist; every server chroots the login elsewhere.
  if ! id -u "$ftp_user" >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir / \
      --shell /usr/sbin/nologin --comment "distributor FTP test servers" "$ftp_user" || return 1
  fi
  [ -s "$ftp_password" ] || (umask 077 && mkdir -p "$(dirname "$ftp_password")" &&
    head -c 18 /dev/urandom | base64 | tr '+/' 'xy' >"$ftp_password") || return 1
  echo "$ftp_user:$(cat "$ftp_password")" | chpasswd || return 1
  printf '%s\n' "# Generated by scripts/test-servers (scripts/servers/ftp.sh): vsftpd's test login." \
    "auth required pam_unix.so" "account required pam_unix.so" "session required pam_permit.so" \
    >"/etc/pam.d/$ftp_pam_service"
}

# ftp_reach DIR: makes DIR reachable by $ftp_user: vsftpd and ProFTPD enter
# the login's root as that user, so every directory above it must be
# searchable by others (a state directory below /root is not). A directory
# that is not gets o+x (search, not read), with a warning.
ftp_reach() {
  local as p dirs=() i
  as=(setpriv --reuid="$(id -u "$ftp_user")" --regid="$(id -g "$ftp_user")" --clear-groups)
  "${as[@]}" test -x "$1" && return 0
  p=$1
  while [ "$p" != / ]; do
    dirs=("$p" "${dirs[@]}")
    p=$(dirname "$p")
  done
  for i in "${dirs[@]}"; do
    "${as[@]}" test -x "$i" && continue
    log "ftp: making $i searchable by others (chmod o+x): the FTP logins enter their roots below it as $ftp_user"
    chmod o+x "$i" || return 1
  done
  "${as[@]}" test -x "$1"
}

ftp_prepare() {
  [ -n "$ftp_prepared" ] || {
    ftp_prepared=failed
    if [ "$(id -u)" != 0 ]; then
      log "ftp: the FTP servers need root (chroot, setuid, useradd)"
      return 1
    fi
    ftp_tls && ftp_account && ftp_prepared=ok
  }
  [ "$ftp_prepared" = ok ]
}

# ftp_port_range: the first of ftp_pasv_ports consecutive ports for
# passive data connections, below the kernel's ephemeral ports
# (net.ipv4.ip_local_port_range). ProFTPD picks one at random per PASV and
# answers "425 Address already in use" when another session's data
# connection still holds it (it does not try another): with 100 ports that
# happened in CI under the fault tests' load; 1,000 make it ten times rarer.
ftp_pasv_ports=1000
ftp_port_range() {
  local low
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
  [ "${low:-0}" -gt 12000 ] 2>/dev/null || low=32768
  echo $((10000 + RANDOM % (low - 10000 - ftp_pasv_ports)))
}

# ftp_config_vsftpd DIR PORT PASV: writes DIR/vsftpd.conf and sets cmd.
ftp_config_vsftpd() {
  local d=$1 bin
  bin=$(ftp_unpack vsftpd usr/sbin/vsftpd) || return 1
  mkdir -p "$d/empty" && chmod 755 "$d/empty"
  # ssl_ciphers: the default, DES-CBC3-SHA, is disabled in OpenSSL 3.
  cat >"$d/vsftpd.conf" <<EOF
# Generated by scripts/test-servers: a loopback-only test server.
listen=YES
listen_ipv6=NO
listen_address=127.0.0.1
listen_port=$2
background=NO
seccomp_sandbox=NO
isolate=NO
isolate_network=NO
anonymous_enable=NO
local_enable=YES
write_enable=YES
local_umask=022
pam_service_name=$ftp_pam_service
userlist_enable=NO
chroot_local_user=YES
allow_writeable_chroot=YES
local_root=$d/root
secure_chroot_dir=$d/empty
force_dot_files=YES
utf8_filesystem=YES
pasv_enable=YES
pasv_address=127.0.0.1
pasv_min_port=$3
pasv_max_port=$(($3 + ftp_pasv_ports - 1))
port_enable=NO
ssl_enable=YES
ssl_ciphers=HIGH
rsa_cert_file=$state/ftp-server.pem
rsa_private_key_file=$state/ftp-server.key
force_local_logins_ssl=YES
force_local_data_ssl=YES
require_ssl_reuse=YES
syslog_enable=NO
xferlog_enable=YES
vsftpd_log_file=$d/transfer.log
EOF
  cmd=("$bin/usr/sbin/vsftpd" "$d/vsftpd.conf")
}

# ftp_config_pureftpd DIR PORT PASV [FLAGS...]: the virtual user's puredb
# in DIR and cmd, with FLAGS added.
ftp_config_pureftpd() {
  local d=$1 port=$2 pasv=$3 bin hash
  shift 3
  bin=$(ftp_unpack pure-ftpd usr/sbin/pure-ftpd) || return 1
  hash=$(openssl passwd -6 -stdin <"$ftp_password") || return 1
  # The virtual user's line as `pure-pw useradd` writes it, but with a
  # SHA-512 crypt hash: pure-pw's argon2id takes seconds to make and, per
  # login, to check on a loaded machine; pure-ftpd checks crypt(3) hashes
  # too. Then `pure-pw mkdb` makes the puredb file pure-ftpd reads.
  printf '%s:%s:%s:%s::%s/./::::::::::::\n' "$ftp_user" "$hash" "$(id -u "$ftp_user")" "$(id -g "$ftp_user")" \
    "$d/root" >"$d/pureftpd.passwd" &&
    "$bin/usr/bin/pure-pw" mkdb "$d/pureftpd.pdb" -f "$d/pureftpd.passwd" >"$d/pure-pw.log" 2>&1 || {
    log "ftp: pure-pw failed (see $d/pure-pw.log)"
    return 1
  }
  # -Y 3: TLS required on the control and the data connections; -D: list
  # dotfiles; -E: no anonymous login; -A: chroot everyone (to the home);
  # -f none: no syslog; -c: at most 50 clients.
  cmd=("$bin/usr/sbin/pure-ftpd" -S "127.0.0.1,$port" -4 -H -f none -l "puredb:$d/pureftpd.pdb"
    -Y 3 -2 "$state/ftp-server.pem,$state/ftp-server.key" -D -E -A -c 50 -p "$pasv:$((pasv + ftp_pasv_ports - 1))"
    -O "clf:$d/transfer.log" "$@")
}

# ftp_config_proftpd DIR PORT PASV OVERWRITE: the virtual user's passwd
# file, DIR/proftpd.conf (AllowOverwrite OVERWRITE) and cmd.
ftp_config_proftpd() {
  local d=$1 hash
  ensure_proftpd || return 1
  [ -e /usr/lib/proftpd/mod_tls.so ] || { log "ftp: /usr/lib/proftpd/mod_tls.so is missing"; return 1; }
  hash=$(openssl passwd -6 -stdin <"$ftp_password") || return 1
  echo "$ftp_user:$hash:$(id -u "$ftp_user"):$(id -g "$ftp_user")::$d/root:/usr/sbin/nologin" >"$d/passwd"
  chmod 600 "$d/passwd"
  cat >"$d/proftpd.conf" <<EOF
# Generated by scripts/test-servers: a loopback-only test server.
ServerType standalone
ServerName "distributor-test-ftp"
DefaultAddress 127.0.0.1
SocketBindTight on
UseIPv6 off
Port $2
User nobody
Group nogroup
PidFile "$d/proftpd.pid"
ScoreboardFile "$d/proftpd.scoreboard"
DelayTable none
WtmpLog off
UseReverseDNS off
<IfModule mod_ident.c>
  IdentLookups off
</IfModule>
AuthPAM off
AuthOrder mod_auth_file.c
AuthUserFile "$d/passwd"
RequireValidShell off
UseFtpUsers off
DefaultRoot ~
Umask 022
AllowOverwrite $4
PassivePorts $3 $(($3 + ftp_pasv_ports - 1))
SystemLog "$d/system.log"
TransferLog "$d/transfer.log"
# One line per command the server handled (its name, %m): bench/run counts
# the lines a run adds; commands-full.log has them with their arguments
# (%r; ProFTPD hides the password).
LogFormat commands "%m"
LogFormat commandlines "%r"
ExtendedLog "$d/commands.log" ALL commands
ExtendedLog "$d/commands-full.log" ALL commandlines
ModulePath /usr/lib/proftpd
LoadModule mod_tls.c
TLSEngine on
TLSRequired on
TLSLog "$d/tls.log"
TLSProtocol TLSv1.2 TLSv1.3
TLSRSACertificateFile "$state/ftp-server.pem"
TLSRSACertificateKeyFile "$state/ftp-server.key"
TLSVerifyClient off
EOF
  /usr/sbin/proftpd -t -c "$d/proftpd.conf" >"$d/server.log" 2>&1 || {
    log "ftp: invalid ProFTPD configuration (see $d/server.log)"
    return 1
  }
  # -n: no daemon, so $! is the master process.
  cmd=(/usr/sbin/proftpd -n -c "$d/proftpd.conf")
}

# ftp_config NAME DIR PORT PASV: writes NAME's configuration and sets cmd,
# the command that runs it in the foreground.
ftp_config() {
  case $1 in
  vsftpd) ftp_config_vsftpd "$2" "$3" "$4" ;;
  pureftpd) ftp_config_pureftpd "$2" "$3" "$4" ;;
  pureftpd-norename) ftp_config_pureftpd "$2" "$3" "$4" -G ;;
  proftpd) ftp_config_proftpd "$2" "$3" "$4" on ;;
  proftpd-nooverwrite) ftp_config_proftpd "$2" "$3" "$4" off ;;
  *) return 1 ;;
  esac
}

# start_ftp NAME: starts the FTP server NAME (one of $ftp_servers), or
# reuses it, and writes $state/ftp-NAME/env.
start_ftp() {
  local name=$1 d=$state/ftp-$1
  mkdir -p "$d"
  if alive "$d/server.pid" && grep -q _PASV= "$d/env" 2>/dev/null && listening "$(cat "$d/port")"; then
    log "ftp: reusing $name on 127.0.0.1:$(cat "$d/port")"
    return 0
  fi
  stop_pid "$d/server.pid"
  rm -f "$d/env"
  ftp_prepare || { log "ftp: $name not started"; return 1; }
  mkdir -p "$d/root" && chown "$ftp_user:$ftp_user" "$d/root" && chmod 755 "$d/root" && ftp_reach "$d/root" || return 1
  local port cmd pasv
  for _ in 1 2 3; do
    port=$(free_port) || return 1
    pasv=$(ftp_port_range)
    ftp_config "$name" "$d" "$port" "$pasv" || { log "ftp: $name not started"; return 1; }
    "${cmd[@]}" >>"$d/server.log" 2>&1 </dev/null &
    echo $! >"$d/server.pid"
    if wait_port "$port" "$d/server.pid" 10; then
      break
    fi
    log "ftp: $name did not come up on port $port (see $d/server.log)"
    stop_pid "$d/server.pid"
    port=
  done
  [ -n "$port" ] || return 1
  echo "$port" >"$d/port"
  local v
  v=DISTRIBUTOR_TEST_FTP_$(echo "$name" | tr 'a-z-' 'A-Z_')
  cat >"$d/env" <<EOF
export ${v}_ADDR=127.0.0.1:$port
export ${v}_USER=$ftp_user
export ${v}_PASSWORD=$(cat "$ftp_password")
export ${v}_CA=$state/ftp-ca.pem
export ${v}_ROOT=$d/root
export ${v}_PASV=$pasv
EOF
  log "ftp: $name on 127.0.0.1:$port"
}

stop_ftp() {
  local name
  for name in $ftp_servers; do
    stop_pid "$state/ftp-$name/server.pid"
    rm -f "$state/ftp-$name/env"
  done
}

# ftp_alive: one of the FTP servers runs.
ftp_alive() {
  local name
  for name in $ftp_servers; do
    alive "$state/ftp-$name/server.pid" && return 0
  done
  return 1
}

# ftp_env: the FTP servers' part of the env file.
ftp_env() {
  local name
  for name in $ftp_servers; do
    cat "$state/ftp-$name/env" 2>/dev/null
  done
  return 0
}
