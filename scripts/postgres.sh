#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on 127.0.0.1 for the OIDCPostgres tests and benchmark.
#
#   scripts/postgres.sh start
#       initdb into .build-postgres/data (when run as root: as the system user `oidc-postgres`,
#       created if missing, into a directory of /tmp it owns), starts the server on a free port of
#       127.0.0.1, where the user `oidc` logs in with a random password (SCRAM-SHA-256; `trust` only
#       on the cluster's own Unix socket, in that private directory), creates the database
#       `oidc_test` and prints its URL (postgres://oidc:PASSWORD@127.0.0.1:PORT/oidc_test?sslmode=disable:
#       the cluster has no TLS) on stdout. Already running: prints it again.
#   scripts/postgres.sh stop
#       Stops the server (fast shutdown, then immediate) and removes the cluster. Not running: succeeds.
#   scripts/postgres.sh run COMMAND [ARGS...]
#       start, runs COMMAND with OIDC_TEST_DATABASE_URL set, then stop whatever happened; exits with
#       COMMAND's status. Without PostgreSQL's server programs it says so and runs COMMAND without
#       the variable (the database tests then skip, saying why).
#
# The server programs are looked for in PG_BIN, then /usr/lib/postgresql/*/bin, then PATH
# (Debian's `postgresql` package; .ci/run installs it).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.build-postgres"
data_file="$state/datadir"
url_file="$state/url"
user="oidc-postgres"

die() {
    echo "postgres: $*" >&2
    exit 1
}

find_bin() {
    if [ -n "${PG_BIN:-}" ] && [ -x "$PG_BIN/pg_ctl" ]; then echo "$PG_BIN"; return 0; fi
    local candidate
    for candidate in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$candidate/pg_ctl" ] && [ -x "$candidate/initdb" ]; then echo "$candidate"; return 0; fi
    done
    if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v pg_ctl)"
        return 0
    fi
    return 1
}

# Runs a server program as the cluster's owner: ourselves, or `oidc-postgres` when we are root
# (PostgreSQL refuses to run as root).
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$user" -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

running() {
    local data
    data=$(cat "$data_file" 2>/dev/null || true)
    [ -f "$url_file" ] && [ -n "$data" ] && [ -f "$data/cluster/postmaster.pid" ] &&
        as_owner "$bin/pg_ctl" -D "$data/cluster" status >/dev/null 2>&1
}

start() {
    if running; then cat "$url_file"; return 0; fi
    stop
    mkdir -p "$state"
    # The cluster's files: in the checkout, or, as root, in a directory of /tmp that belongs to the
    # unprivileged user (so that no directory of yours needs opening to it).
    data="$state/data"
    if [ "$(id -u)" -eq 0 ]; then
        id -u "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
        data=$(mktemp -d /tmp/oidc-postgres.XXXXXX)
        chown "$user" "$data"
    fi
    mkdir -p "$data"
    echo "$data" > "$data_file"
    local password
    password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
    (umask 077 && echo "$password" > "$data/password")
    [ "$(id -u)" -ne 0 ] || chown "$user" "$data/password"
    as_owner "$bin/initdb" -D "$data/cluster" -U oidc --pwfile="$data/password" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >"$state/initdb.log" 2>&1 || { rm -f "$data/password"; die "initdb failed: $(tail -5 "$state/initdb.log")"; }
    rm -f "$data/password"
    local port attempt
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        if as_owner "$bin/pg_ctl" -D "$data/cluster" -l "$data/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c max_connections=200" start >/dev/null 2>&1; then
            break
        fi
        port=""
    done
    [ -n "$port" ] || die "the server did not start: $(tail -5 "$data/server.log" 2>/dev/null)"
    as_owner "$bin/psql" -X -q -h "$data" -p "$port" -U oidc -d postgres -c "CREATE DATABASE oidc_test" >/dev/null ||
        die "could not create the database oidc_test"
    (umask 077 && echo "postgres://oidc:$password@127.0.0.1:$port/oidc_test?sslmode=disable" > "$url_file")
    cat "$url_file"
}

stop() {
    local data
    data=$(cat "$data_file" 2>/dev/null || true)
    if [ -n "$data" ] && [ -d "$data/cluster" ]; then
        as_owner "$bin/pg_ctl" -D "$data/cluster" -m fast -w -t 20 stop >/dev/null 2>&1 ||
            as_owner "$bin/pg_ctl" -D "$data/cluster" -m immediate -w -t 20 stop >/dev/null 2>&1 || true
    fi
    [ -n "$data" ] && case "$data" in "$state"/*|/tmp/oidc-postgres.*) rm -rf "$data" ;; esac
    rm -rf "$state"
}

command=${1:-}
[ -n "$command" ] || { echo "usage: $0 start | stop | run COMMAND [ARGS...]" >&2; exit 2; }
shift

if ! bin=$(find_bin); then
    if [ "$command" = run ]; then
        echo "postgres: PostgreSQL's server programs (initdb, pg_ctl) are not installed (Debian: apt-get install postgresql); the database tests will skip" >&2
        exec "$@"
    fi
    die "PostgreSQL's server programs (initdb, pg_ctl) are not installed (Debian: apt-get install postgresql)"
fi

case "$command" in
start) start ;;
stop) stop ;;
run)
    [ $# -gt 0 ] || die "run needs a command"
    # Set before starting: a start that fails half-way (or an interrupt) still stops what it began.
    trap stop EXIT
    trap 'exit 130' INT TERM
    url=$(start)
    status=0
    OIDC_TEST_DATABASE_URL="$url" "$@" || status=$?
    exit $status
    ;;
*) echo "usage: $0 start | stop | run COMMAND [ARGS...]" >&2; exit 2 ;;
esac
