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
#       With PgBouncer installed, also starts one in front of the cluster (as the same user, on
#       another free port of 127.0.0.1, same user and password) serving four databases, all the
#       cluster's `oidc_test`: `oidc_transaction` (pool_mode=transaction, 2 server connections),
#       `oidc_transaction1` (transaction, 1 server connection: every client shares one server
#       session), `oidc_session` (session) and `oidc_statement` (statement). Its URL
#       (postgres://oidc:PASSWORD@127.0.0.1:PORT/oidc_transaction?sslmode=disable) goes to
#       .build-postgres/pgbouncer-url.
#   scripts/postgres.sh stop
#       Stops PgBouncer and the server (fast shutdown, then immediate) and removes the cluster. Not
#       running: succeeds.
#   scripts/postgres.sh run COMMAND [ARGS...]
#       start, runs COMMAND with OIDC_TEST_DATABASE_URL (and, with PgBouncer, OIDC_TEST_PGBOUNCER_URL)
#       set, then stop whatever happened; exits with COMMAND's status. Without PostgreSQL's server
#       programs it says so and runs COMMAND without the variables (the database tests then skip,
#       saying why); without PgBouncer only the pooler tests skip.
#
# The server programs are looked for in PG_BIN, then /usr/lib/postgresql/*/bin, then PATH
# (Debian's `postgresql` package; .ci/run installs it); PgBouncer in PATH, then /usr/sbin
# (Debian's `pgbouncer`, which `scripts/install-deps.sh test` installs too).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.build-postgres"
data_file="$state/datadir"
url_file="$state/url"
pgbouncer_url_file="$state/pgbouncer-url"
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

find_pgbouncer() {
    if command -v pgbouncer 2>/dev/null; then return 0; fi
    [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer
}

# Waits up to 10 s until something accepts connections on 127.0.0.1:$1.
wait_for_port() {
    local attempt
    for attempt in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    return 1
}

# PgBouncer in front of the cluster's port $1, its files in $data/pgbouncer; the user oidc logs in
# with $2, the cluster's password (SCRAM-SHA-256 on both sides), which stays in files of mode 0600.
start_pgbouncer() {
    local server_port=$1 password=$2 pgbouncer dir port attempt target
    if ! pgbouncer=$(find_pgbouncer); then
        echo "postgres: PgBouncer is not installed (Debian: apt-get install pgbouncer); the pooler tests will skip" >&2
        return 0
    fi
    dir="$data/pgbouncer"
    mkdir -p "$dir"
    (umask 077 && printf '"oidc" "%s"\n' "$password" > "$dir/userlist.txt")
    target="host=127.0.0.1 port=$server_port dbname=oidc_test"
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        (umask 077 && cat > "$dir/pgbouncer.ini" <<INI
[databases]
oidc_transaction = $target pool_mode=transaction pool_size=2
oidc_transaction1 = $target pool_mode=transaction pool_size=1
oidc_session = $target pool_mode=session pool_size=60
oidc_statement = $target pool_mode=statement pool_size=2
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
pidfile = $dir/pgbouncer.pid
logfile = $dir/pgbouncer.log
max_client_conn = 400
INI
        )
        [ "$(id -u)" -ne 0 ] || chown -R "$user" "$dir"
        if as_owner "$pgbouncer" -d "$dir/pgbouncer.ini" >>"$dir/start.log" 2>&1 && wait_for_port "$port"; then
            (umask 077 && echo "postgres://oidc:$password@127.0.0.1:$port/oidc_transaction?sslmode=disable" > "$pgbouncer_url_file")
            return 0
        fi
        stop_pgbouncer
    done
    die "PgBouncer did not start: $(tail -5 "$dir/pgbouncer.log" "$dir/start.log" 2>/dev/null)"
}

# Stops PgBouncer (immediate shutdown, then SIGKILL after 5 s). Not running: succeeds.
stop_pgbouncer() {
    local data pid attempt
    rm -f "$pgbouncer_url_file"
    data=$(cat "$data_file" 2>/dev/null || true)
    [ -n "$data" ] && [ -f "$data/pgbouncer/pgbouncer.pid" ] || return 0
    pid=$(cat "$data/pgbouncer/pgbouncer.pid" 2>/dev/null || true)
    rm -f "$data/pgbouncer/pgbouncer.pid"
    case "$pid" in '' | *[!0-9]*) return 0 ;; esac
    kill -TERM "$pid" 2>/dev/null || return 0
    for attempt in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
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
    # max_connections: the package suite peaked at 53 client sessions with every test at once, 27 at
    # the Makefile's 12 tests at a time (pg_stat_activity, sampled every 0.5 s); 200 leaves room.
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
    start_pgbouncer "$port" "$password"
    (umask 077 && echo "postgres://oidc:$password@127.0.0.1:$port/oidc_test?sslmode=disable" > "$url_file")
    cat "$url_file"
}

stop() {
    stop_pgbouncer
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
    pgbouncer_url=$(cat "$pgbouncer_url_file" 2>/dev/null || true)
    status=0
    OIDC_TEST_DATABASE_URL="$url" OIDC_TEST_PGBOUNCER_URL="$pgbouncer_url" "$@" || status=$?
    exit $status
    ;;
*) echo "usage: $0 start | stop | run COMMAND [ARGS...]" >&2; exit 2 ;;
esac
