#!/usr/bin/env bash
# Runs a real MCP server from PyPI (the official MCP Python SDK, `mcp`; scripts/mcp-server.py), protected
# as an OAuth resource, and its authorization server, in the background on 127.0.0.1, for the tests that
# start from a resource's URL (RFC 9728, RFC 7591, RFC 8707, step-up). No root needed: everything lives
# under .build-mcp/ and runs as whoever runs this. See docs/interop.md.
#
#   scripts/mcp-server.sh start [PORT]
#       Installs Tests/Interop/mcp-requirements.txt into .build-mcp/venv (made with `python3 -m venv`,
#       reused when present), makes a fresh control secret (.build-mcp/secrets/control, 0600), starts the
#       MCP server (streamable HTTP at http://127.0.0.1:PORT/mcp, default PORT 9420) and its authorization
#       server (http://127.0.0.1:PORT+1) in one process, waits at most 30 s for both to answer, and prints
#       shell `export OIDC_MCP_...=...` lines on stdout (also in .build-mcp/env.sh):
#         OIDC_MCP_RESOURCE                 the MCP endpoint, which is also the RFC 8707 resource
#         OIDC_MCP_RESOURCE_METADATA        its RFC 9728 metadata document
#         OIDC_MCP_ISSUER                   the authorization server (RFC 8414 metadata at its root)
#         OIDC_MCP_SCOPE                    the base scope (the metadata's scopes_supported)
#         OIDC_MCP_STEP_UP_SCOPE            the scope the admin_report tool needs besides it
#         OIDC_MCP_STEP_UP_TOOL             that tool (calling it without the scope: 403 insufficient_scope)
#         OIDC_MCP_CONTROL_SECRET_FILE      the secret of the AS's /testing/ routes (GET /testing/log,
#                                           POST /testing/expire-access-tokens; scripts/mcp-server.py)
#       never a secret itself. Already running on PORT: prints them again.
#   scripts/mcp-server.sh stop [PORT]
#       Stops it (SIGTERM, then SIGKILL after 10 s). Nothing is kept: clients, codes and tokens live in
#       the process's memory. Not running: succeeds.
#   scripts/mcp-server.sh status
#       Running and answering: prints the export lines, exit 0. Otherwise says why on stderr, exit 1.
#
# The authorization server has no login page: it approves every authorization request at once for its
# one test user, so a login's "browser" only follows the redirect back to the client.
# Environment: PYTHON (default python3, 3.10 or newer) makes the virtualenv; MCP_STATE_DIR (default
# .build-mcp); MCP_ACCESS_TOKEN_TTL (the access tokens' lifetime in seconds, default 3600).
# Files: .build-mcp/{venv/,secrets/,mcp.pid,mcp.log,port,env.sh}.
set -euo pipefail
umask 077   # the control secret and the log: this user's only

root=$(cd "$(dirname "$0")/.." && pwd)
state="${MCP_STATE_DIR:-$root/.build-mcp}"
venv="$state/venv"
secrets="$state/secrets"
pid_file="$state/mcp.pid"
log_file="$state/mcp.log"
port_file="$state/port"
env_file="$state/env.sh"
requirements="$root/Tests/Interop/mcp-requirements.txt"
server="$root/scripts/mcp-server.py"
python=${PYTHON:-python3}
ttl=${MCP_ACCESS_TOKEN_TTL:-3600}
default_port=9420
start_timeout=30   # seconds, for both servers to answer 200
stop_timeout=10    # seconds, after SIGTERM before SIGKILL

peer=mcp-server
# shellcheck source=lib/peer.sh
. "$(dirname "$0")/lib/peer.sh"

die() {
    echo "mcp-server: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 start [PORT] | stop [PORT] | status" >&2
    exit 2
}

# The PID in the pid file, if that process is alive and is this server (not a reused PID).
running_pid() { pid_in "$pid_file" "$server"; }

# Fails unless both metadata documents (the resource's at PORT, the AS's at PORT+1) answer 200 within 2 s each.
answers() {
    "$venv/bin/python" - "http://127.0.0.1:$1/.well-known/oauth-protected-resource/mcp" \
        "http://127.0.0.1:$(($1 + 1))/.well-known/oauth-authorization-server" <<'PY'
import sys, urllib.request
try:
    for url in sys.argv[1:]:
        with urllib.request.urlopen(url, timeout=2) as response:
            if response.status != 200:
                sys.exit(1)
except Exception:
    sys.exit(1)
PY
}

port_in_use() { tcp_port_in_use "$venv/bin/python" "$1"; }

export_lines() {
    local port=$1
    cat <<EOF
export OIDC_MCP_RESOURCE=http://127.0.0.1:$port/mcp
export OIDC_MCP_RESOURCE_METADATA=http://127.0.0.1:$port/.well-known/oauth-protected-resource/mcp
export OIDC_MCP_ISSUER=http://127.0.0.1:$((port + 1))
export OIDC_MCP_SCOPE=mcp:tools
export OIDC_MCP_STEP_UP_SCOPE=mcp:admin
export OIDC_MCP_STEP_UP_TOOL=admin_report
export OIDC_MCP_CONTROL_SECRET_FILE=$secrets/control
EOF
}

cmd_start() {
    [ $# -le 1 ] || usage
    local port=${1:-$default_port}
    check_port "$port"
    [ "$port" -lt 65535 ] || die "PORT+1 (the authorization server) must be a port too: choose a lower PORT"
    [[ $ttl =~ ^[1-9][0-9]{0,6}$ ]] || die "MCP_ACCESS_TOKEN_TTL must be a number of seconds, not '$ttl'"
    mkdir -p "$state"
    ensure_venv "$python" "$venv" "$requirements" "the MCP Python SDK"

    local pid
    if pid=$(running_pid); then
        if [ "$(cat "$port_file" 2>/dev/null)" = "$port" ] && answers "$port"; then
            cat "$env_file"
            return 0
        fi
        die "already running (PID $pid, port $(cat "$port_file" 2>/dev/null)); run '$0 stop' first"
    fi
    rm -f "$pid_file"
    port_in_use "$port" && die "something else is listening on 127.0.0.1:$port; choose another port"
    port_in_use "$((port + 1))" && die "something else is listening on 127.0.0.1:$((port + 1)) (PORT+1, for the authorization server); choose another port"

    (umask 077 && mkdir -p "$secrets" && openssl rand -hex 32 >"$secrets/control") ||
        die "could not make the control secret"
    echo "$port" >"$port_file"

    : >"$log_file"
    pid=$(PYTHONUNBUFFERED=1 launch_detached "$log_file" "$venv/bin/python" "$server" --port "$port" --as-port "$((port + 1))" \
        --control-secret-file "$secrets/control" --access-token-ttl "$ttl")
    echo "$pid" >"$pid_file"
    ready() { answers "$port" && export_lines "$port" >"$env_file" && cat "$env_file"; }
    await_start "$pid" "the metadata of 127.0.0.1:$port and :$((port + 1))"
}

# Stops PID (scripts/lib/peer.sh) and removes its pid file.
stop_pid() {
    stop_process "$1" "$stop_timeout"
    forget_pid
}

cmd_stop() { peer_stop "$@"; }

cmd_status() {
    [ $# -eq 0 ] || usage
    local pid port
    pid=$(running_pid) || die "not running"
    port=$(cat "$port_file" 2>/dev/null) || die "running (PID $pid) but $port_file is missing"
    answers "$port" || die "running (PID $pid) but its metadata on 127.0.0.1:$port and :$((port + 1)) does not answer 200"
    cat "$env_file"
}

peer_main "$@"
