#!/usr/bin/env bash
# Runs Debian's glewlwyd (2.7.5, `apt-get install glewlwyd`), an independent OpenID provider for the
# interop tests, on 127.0.0.1, configured only through its admin REST API. See docs/glewlwyd.md.
#
#   scripts/glewlwyd.sh start [--tls] [PORT]
#       Makes a new SQLite database from the package's schema in .build-glewlwyd/db (when run as root:
#       owned by the system user `oidc-glewlwyd`, created if missing, which then runs glewlwyd; in
#       /tmp/oidc-glewlwyd.* when that user cannot reach the checkout), writes glewlwyd's config
#       there, starts glewlwyd on 127.0.0.1:PORT (default: a free port; also $GLEWLWYD_PORT), waits at
#       most 20 s for it, then provisions it through the admin API (scripts/glewlwyd-provision.py:
#       six OIDC issuers, the user alice, the clients, their secrets and keys under
#       .build-glewlwyd/secrets) and prints shell `export OIDC_GLEWLWYD_...=...` lines on stdout (also
#       in .build-glewlwyd/env.sh and env.json): URLs, client ids and the paths of secret and key
#       files, never a secret. Already running (same mode, and PORT if given): prints them again.
#       --tls (or GLEWLWYD_TLS=1): the whole instance serves HTTPS only (glewlwyd has no per-issuer
#       TLS), with a test CA made here (.build-glewlwyd/tls/ca.crt, OIDC_GLEWLWYD_CA_FILE), and adds
#       mTLS (RFC 8705): endpoint aliases .../mtls/..., the client swift-mtls (tls_client_auth) and
#       its certificate and key.
#   scripts/glewlwyd.sh stop
#       Stops it (SIGTERM, then SIGKILL after 10 s) and removes its database. Keeps the secrets and
#       keys (reused by the next start) and the log. Not running: succeeds.
#   scripts/glewlwyd.sh status
#       Running and answering: prints the export lines, exit 0. Otherwise says why on stderr, exit 1.
#
# Environment: GLEWLWYD_PORT (port), GLEWLWYD_RESOURCE_PORT (the port of oidc-dcr's one resource,
# default: one free at provisioning), GLEWLWYD_TLS=1 (as --tls), GLEWLWYD_LOG_LEVEL (default DEBUG),
# GLEWLWYD_DEVICE_INTERVAL (device flow polling interval in seconds, default 2), GLEWLWYD_BIN
# (default: glewlwyd on PATH), GLEWLWYD_STATE_DIR (default .build-glewlwyd: another directory runs
# a second instance beside the first, as `make test-package` does for --tls).
# Files: .build-glewlwyd/{glewlwyd.pid,glewlwyd.log,port,mode,datadir,env.sh,env.json,secrets/,tls/}.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state="${GLEWLWYD_STATE_DIR:-$root/.build-glewlwyd}"
pid_file="$state/glewlwyd.pid"
log_file="$state/glewlwyd.log"
port_file="$state/port"
data_file="$state/datadir"
mode_file="$state/mode"
tls_dir="$state/tls"
env_file="$state/env.sh"
user="oidc-glewlwyd"
start_timeout=20   # seconds, for glewlwyd to answer on its port
stop_timeout=10    # seconds, after SIGTERM before SIGKILL

peer=glewlwyd
# shellcheck source=lib/peer.sh
. "$(dirname "$0")/lib/peer.sh"

die() {
    echo "glewlwyd: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 start [--tls] [PORT] | stop | status" >&2
    exit 2
}

# Secrets and keys another user made are not reused: `oidc` refuses a secret or key file that is
# neither its caller's nor root's (as ssh does), and a user cannot read another's 0600 files. So a
# start by root after an ordinary user's (.ci/run does that) makes its own, and says so.
own_secrets() {
    local secrets="$state/secrets" me
    me=$(id -u)
    [ -e "$secrets" ] || return 0
    if [ -z "$(find "$secrets" "$tls_dir" ! -user "$me" -print -quit 2>/dev/null)" ]; then
        return 0
    fi
    echo "glewlwyd: $secrets holds files of another user; making new secrets and keys for $(id -un)" >&2
    rm -rf "$secrets" "$tls_dir" 2>/dev/null ||
        die "cannot remove $secrets (another user's files); remove it as that user or root, or set GLEWLWYD_STATE_DIR"
}

glewlwyd_bin() {
    local bin=${GLEWLWYD_BIN:-}
    [ -n "$bin" ] || bin=$(command -v glewlwyd 2>/dev/null || true)
    [ -n "$bin" ] || [ ! -x /usr/bin/glewlwyd ] || bin=/usr/bin/glewlwyd
    [ -n "$bin" ] && [ -x "$bin" ] ||
        die "glewlwyd is not installed (Debian: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y glewlwyd)"
    echo "$bin"
}

# The package's SQLite schema, with the initial data (admin user, password `password`, and the
# database user and client backends).
schema() {
    local file=/usr/share/dbconfig-common/data/glewlwyd/install/sqlite3
    if [ -r "$file" ]; then
        cat "$file"
    elif [ -r /usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz ]; then
        gzip -dc /usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz
    else
        die "no SQLite schema found in the glewlwyd package ($file)"
    fi
}

# The PID in the pid file, if that process is alive and is our glewlwyd (not a reused PID).
running_pid() {
    [ -f "$pid_file" ] || return 1
    local pid command
    pid=$(cat "$pid_file" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    command=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    [[ $command == *glewlwyd*--config-file=*glewlwyd.conf* ]] || return 1
    echo "$pid"
}

# HTTP status of a GET on 127.0.0.1 (000 when nothing answers), within 2 s.
http_status() {
    local ca=()
    [ ! -f "$tls_dir/ca.crt" ] || ca=(--cacert "$tls_dir/ca.crt")
    curl -s -o /dev/null -w '%{http_code}' --max-time 2 "${ca[@]}" "$1" 2>/dev/null || true
}

# origin of the running (or starting) instance: http or https on 127.0.0.1:PORT
origin() {
    if [ "$(cat "$mode_file" 2>/dev/null)" = tls ]; then echo "https://127.0.0.1:$1"; else echo "http://127.0.0.1:$1"; fi
}

# The test CA, glewlwyd's server certificate and the swift-mtls client certificate (EC P-256), made
# once with openssl and remade when one expires within a day. Keys in secrets/ (0600), certificates
# in tls/.
make_tls() {
    local secrets="$state/secrets" days=825
    mkdir -p "$tls_dir" "$secrets"
    chmod 700 "$secrets"
    if ! [ -s "$secrets/tls-ca.key" ] || ! openssl x509 -checkend 86400 -noout -in "$tls_dir/ca.crt" >/dev/null 2>&1; then
        (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
            -keyout "$secrets/tls-ca.key" -out "$tls_dir/ca.crt" -subj "/CN=swift-oidc glewlwyd test CA" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" >/dev/null 2>&1) ||
            die "openssl could not make the test CA"
        rm -f "$tls_dir/server.crt" "$tls_dir/swift-mtls.crt"
    fi
    local name subject ext
    for name in server swift-mtls; do
        if [ -s "$secrets/tls-$name.key" ] && openssl x509 -checkend 86400 -noout -in "$tls_dir/$name.crt" >/dev/null 2>&1; then
            continue
        fi
        if [ "$name" = server ]; then
            subject="/CN=127.0.0.1"
            ext=(-addext "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost" -addext "extendedKeyUsage=serverAuth")
        else
            subject="/CN=swift-mtls"
            ext=(-addext "extendedKeyUsage=clientAuth")
        fi
        (umask 077 && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
            -CA "$tls_dir/ca.crt" -CAkey "$secrets/tls-ca.key" -keyout "$secrets/tls-$name.key" \
            -out "$tls_dir/$name.crt" -subj "$subject" -addext "basicConstraints=CA:FALSE" "${ext[@]}" >/dev/null 2>&1) ||
            die "openssl could not make the $name certificate (OpenSSL 3 needed for req -CA)"
    done
    chmod 644 "$tls_dir"/*.crt
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

port_in_use() {
    python3 - "$1" <<'PY'
import socket, sys
with socket.socket() as s:
    s.settimeout(1)
    sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)
PY
}

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- "$@"
    else
        "$@"
    fi
}

# The directory of the database and glewlwyd's config: .build-glewlwyd/db, owned by the unprivileged
# user when we are root; a directory of /tmp when that user cannot reach the checkout.
make_data_dir() {
    local data="$state/db"
    rm -rf "$data"
    mkdir -p "$data"
    if [ "$(id -u)" -eq 0 ]; then
        id -u "$user" >/dev/null 2>&1 ||
            useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
        chown "$user" "$data"
        if ! as_owner test -w "$data" 2>/dev/null; then
            rm -rf "$data"
            data=$(mktemp -d /tmp/oidc-glewlwyd.XXXXXX)
            chown "$user" "$data"
        fi
    fi
    echo "$data" >"$data_file"
    echo "$data"
}

write_config() {
    local data=$1 port=$2 scheme=http tls=""
    if [ "$(cat "$mode_file" 2>/dev/null)" = tls ]; then
        scheme=https
        tls="use_secure_connection=true
secure_connection_key_file=\"$data/server.key\"
secure_connection_pem_file=\"$data/server.crt\"
secure_connection_ca_file=\"$data/ca.crt\""
    fi
    # No use_secure_connection line in HTTP mode: glewlwyd 2.7.5 wants the key files even when it is false.
    cat >"$data/glewlwyd.conf" <<EOF
# Written by scripts/glewlwyd.sh; regenerated at each start.
port=$port
bind_address="127.0.0.1"
external_url="$scheme://127.0.0.1:$port"
login_url="login.html"
api_prefix="api"
allow_origin="*"
log_mode="console"
log_level="${GLEWLWYD_LOG_LEVEL:-DEBUG}"
cookie_secure=0
cookie_same_site="empty"
session_expiration=3600
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=true
login_api_enabled=true
plugin_api_run_enabled=""
add_x_frame_option_header_deny=true
max_post_size=16778240
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
hash_algorithm="SHA512"
$tls
database =
{
  type = "sqlite3"
  path = "$data/glewlwyd.db"
};
EOF
    chmod 644 "$data/glewlwyd.conf"
}

# Starts glewlwyd in its own session (setsid, then exec: the PID stays glewlwyd's), as the
# unprivileged user when we are root, stdin from /dev/null and output to the log.
launch() {
    local bin=$1 conf=$2 uid="" gid=""
    if [ "$(id -u)" -eq 0 ]; then
        uid=$(id -u "$user")
        gid=$(id -g "$user")
    fi
    python3 -c '
import os, sys
try:
    os.setsid()
except OSError:
    pass
uid, gid = sys.argv[1], sys.argv[2]
if uid:
    os.setgroups([])
    os.setgid(int(gid))
    os.setuid(int(uid))
os.execv(sys.argv[3], sys.argv[3:])
' "$uid" "$gid" "$bin" "--config-file=$conf" </dev/null >>"$log_file" 2>&1 &
    echo $!
}

# SIGTERM, a bounded wait, then SIGKILL and another bounded wait.
stop_pid() { stop_process "$1" "$stop_timeout"; }

# Removes what a start made, except the secrets, the keys and the log.
cleanup() {
    local data
    data=$(cat "$data_file" 2>/dev/null || true)
    if [ -n "$data" ]; then
        case "$data" in "$state"/db | /tmp/oidc-glewlwyd.*) rm -rf "$data" ;; esac
    fi
    rm -rf "$state/db"
    rm -f "$pid_file" "$port_file" "$data_file" "$env_file" "$state/env.json" "$mode_file"
}

cmd_start() {
    local mode=http wanted=""
    [ "${GLEWLWYD_TLS:-}" != 1 ] || mode=tls
    while [ $# -gt 0 ]; do
        case "$1" in
            --tls) mode=tls ;;
            -*) usage ;;
            *) [ -z "$wanted" ] || usage; wanted=$1 ;;
        esac
        shift
    done
    wanted=${wanted:-${GLEWLWYD_PORT:-}}
    [ -z "$wanted" ] || check_port "$wanted"
    local pid port
    if pid=$(running_pid); then
        port=$(cat "$port_file" 2>/dev/null || true)
        if [ -n "$wanted" ] && [ "$wanted" != "$port" ]; then
            die "already running (PID $pid) on port $port; run '$0 stop' first"
        fi
        if [ "$(cat "$mode_file" 2>/dev/null || echo http)" != "$mode" ]; then
            die "already running (PID $pid) in $(cat "$mode_file" 2>/dev/null || echo http) mode, not $mode; run '$0 stop' first"
        fi
        if [ -s "$env_file" ] && [ "$(http_status "$(origin "$port")/api/oidc/.well-known/openid-configuration")" = 200 ]; then
            cat "$env_file"
            return 0
        fi
        echo "glewlwyd: PID $pid runs but is not provisioned or not answering; restarting it" >&2
        stop_pid "$pid"
    fi
    cleanup

    local bin data started=$SECONDS attempt
    bin=$(glewlwyd_bin)
    command -v sqlite3 >/dev/null 2>&1 || die "sqlite3 not found (Debian: apt-get install sqlite3)"
    command -v curl >/dev/null 2>&1 || die "curl not found (Debian: apt-get install curl)"
    command -v openssl >/dev/null 2>&1 || die "openssl not found (Debian: apt-get install openssl)"
    mkdir -p "$state"
    own_secrets
    echo "$mode" >"$mode_file"
    data=$(make_data_dir)
    schema | as_owner sqlite3 "$data/glewlwyd.db" >/dev/null || die "could not make $data/glewlwyd.db"
    if [ "$mode" = tls ]; then
        make_tls
        cp "$tls_dir/server.crt" "$tls_dir/ca.crt" "$data/"
        (umask 077 && cp "$state/secrets/tls-server.key" "$data/server.key")
        [ "$(id -u)" -ne 0 ] || chown "$user" "$data/server.key" "$data/server.crt" "$data/ca.crt"
    fi

    # Stops what this start began if it fails half-way or is interrupted.
    trap 'if [ -n "${pid:-}" ]; then stop_pid "$pid" || true; fi; cleanup' EXIT
    trap 'exit 130' INT TERM
    : >"$log_file"
    pid=""
    for attempt in 1 2 3 4 5; do
        port=${wanted:-$(free_port)}
        if port_in_use "$port"; then
            [ -z "$wanted" ] || die "something else is listening on 127.0.0.1:$port; choose another port"
            continue
        fi
        write_config "$data" "$port"
        pid=$(launch "$bin" "$data/glewlwyd.conf")
        echo "$pid" >"$pid_file"
        local deadline=$((SECONDS + start_timeout)) up=""
        while [ "$SECONDS" -lt "$deadline" ]; do
            kill -0 "$pid" 2>/dev/null || break
            if [ "$(http_status "$(origin "$port")/config")" = 200 ]; then
                up=1
                break
            fi
            sleep 0.1
        done
        [ -z "$up" ] || break
        if kill -0 "$pid" 2>/dev/null; then
            echo "glewlwyd: no answer from 127.0.0.1:$port within ${start_timeout}s; the end of $log_file:" >&2
            tail -n 20 "$log_file" >&2 || true
            exit 1
        fi
        pid=""
        rm -f "$pid_file"
        [ -z "$wanted" ] || break
        echo "glewlwyd: exited at start on port $port (attempt $attempt); trying another port" >&2
    done
    if [ -z "$pid" ]; then
        echo "glewlwyd: glewlwyd did not start; the end of $log_file:" >&2
        tail -n 20 "$log_file" >&2 || true
        exit 1
    fi
    echo "$port" >"$port_file"

    local tls_args=()
    [ "$mode" != tls ] || tls_args=(--tls-dir "$tls_dir")
    if ! GLEWLWYD_DEVICE_INTERVAL=${GLEWLWYD_DEVICE_INTERVAL:-2} \
        python3 "$root/scripts/glewlwyd-provision.py" --api "$(origin "$port")/api" --state "$state" "${tls_args[@]}" >/dev/null; then
        echo "glewlwyd: provisioning failed; the end of $log_file:" >&2
        tail -n 20 "$log_file" >&2 || true
        exit 1
    fi
    trap - EXIT INT TERM
    echo "glewlwyd: running (PID $pid) on $(origin "$port"), started and provisioned in $((SECONDS - started)) s" >&2
    cat "$env_file"
}

cmd_stop() {
    [ $# -eq 0 ] || usage
    local pid
    if pid=$(running_pid); then
        stop_pid "$pid"
        echo "glewlwyd: stopped (PID $pid)" >&2
    else
        echo "glewlwyd: not running" >&2
    fi
    cleanup
}

cmd_status() {
    [ $# -eq 0 ] || usage
    local pid port
    pid=$(running_pid) || die "not running"
    port=$(cat "$port_file" 2>/dev/null || true)
    [ -n "$port" ] || die "running (PID $pid) but $port_file is missing"
    [ "$(http_status "$(origin "$port")/api/oidc/.well-known/openid-configuration")" = 200 ] ||
        die "running (PID $pid) but $(origin "$port")/api/oidc/.well-known/openid-configuration does not answer 200"
    [ -s "$env_file" ] || die "running (PID $pid) but not provisioned ($env_file is missing)"
    cat "$env_file"
}

peer_main "$@"
