#!/usr/bin/env bash
# Runs oidc-provider-mock (PyPI), the independent OpenID provider of the interop tests, in the
# background on 127.0.0.1. See docs/interop.md.
#
#   scripts/mock-provider.sh start  [PORT] [-- PROVIDER-OPTIONS...]
#       Installs Tests/Interop/requirements.txt into .build-interop/venv (made with
#       `python3 -m venv`, reused when present), starts the provider bound to 127.0.0.1:PORT
#       (default 9400), waits at most 30 s for its discovery document and prints the issuer URL
#       (e.g. http://127.0.0.1:9400) on stdout. Options after `--` go to oidc-provider-mock
#       (e.g. `-- --require-registration` or `-- --token-max-age 5`). Already running with the same
#       port and options: prints the issuer again and succeeds.
#   scripts/mock-provider.sh stop   [PORT]
#       Stops it (SIGTERM, then SIGKILL after 10 s). Not running: succeeds.
#   scripts/mock-provider.sh status [PORT]
#       Running and answering: prints the issuer URL, exit 0. Otherwise: says why on stderr, exit 1.
#
# Environment: PYTHON (default python3, 3.10 or newer) makes the virtualenv.
# Files: .build-interop/mock-provider.pid, .build-interop/mock-provider.log (the provider's output).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state_dir="$root/.build-interop"
venv="$state_dir/venv"
pid_file="$state_dir/mock-provider.pid"
log_file="$state_dir/mock-provider.log"
args_file="$state_dir/mock-provider.args"
stamp_file="$venv/.requirements.sha256"
requirements="$root/Tests/Interop/requirements.txt"
python=${PYTHON:-python3}
default_port=9400
start_timeout=30   # seconds, for the discovery document to answer 200
stop_timeout=10    # seconds, after SIGTERM before SIGKILL

peer=mock-provider
# shellcheck source=lib/peer.sh
. "$(dirname "$0")/lib/peer.sh"

die() {
    echo "mock-provider: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 start [PORT] [-- PROVIDER-OPTIONS...] | stop [PORT] | status [PORT]" >&2
    exit 2
}

# The PID in the pid file, if that process is alive and is oidc-provider-mock (not a reused PID).
running_pid() { pid_in "$pid_file" oidc-provider-mock; }

# The port the running provider was started on (first line of the args file).
running_port() {
    head -n 1 "$args_file" 2>/dev/null || true
}

# Prints the issuer of the discovery document at PORT; fails unless it answers 200 within 2 s.
issuer_at() {
    local url="http://127.0.0.1:$1/.well-known/openid-configuration"
    "$venv/bin/python" - "$url" <<'PY'
import json, sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=2) as response:
        if response.status != 200:
            sys.exit(1)
        print(json.load(response)["issuer"])
except Exception:
    sys.exit(1)
PY
}

port_in_use() { tcp_port_in_use "$venv/bin/python" "$1"; }

ensure_mock_venv() {
    mkdir -p "$state_dir"
    ensure_venv "$python" "$venv" "$requirements" oidc-provider-mock oidc-provider-mock
}

cmd_start() {
    local port=$default_port
    if [ $# -gt 0 ] && [ "$1" != "--" ]; then
        port=$1
        shift
    fi
    check_port "$port"
    if [ $# -gt 0 ]; then
        [ "$1" = "--" ] || usage
        shift
    fi
    local option
    for option in "$@"; do
        case "$option" in
            -H | --host | --host=* | -H?* | -p | --port | --port=* | -p?*)
                die "'$option': the address is always 127.0.0.1 and the port is the PORT argument" ;;
        esac
    done
    local wanted_args
    wanted_args=$(printf '%s\n' "$port" "$@")

    ensure_mock_venv

    local pid issuer
    if pid=$(running_pid); then
        if [ "$(cat "$args_file" 2>/dev/null)" = "$wanted_args" ] && issuer=$(issuer_at "$port"); then
            echo "$issuer"
            return 0
        fi
        die "already running (PID $pid, port $(running_port)) with other settings; run '$0 stop' first"
    fi
    rm -f "$pid_file" "$args_file"

    if port_in_use "$port"; then
        die "something else is listening on 127.0.0.1:$port; choose another port"
    fi

    : >"$log_file"
    pid=$(NO_COLOR=1 PYTHONUNBUFFERED=1 launch_detached "$log_file" "$venv/bin/oidc-provider-mock" --host 127.0.0.1 --port "$port" "$@")
    echo "$pid" >"$pid_file"
    echo "$wanted_args" >"$args_file"
    ready() { issuer_at "$port"; }
    await_start "$pid" "http://127.0.0.1:$port/.well-known/openid-configuration"
}

# Stops PID (scripts/lib/peer.sh) and removes its pid and args files.
stop_pid() {
    stop_process "$1" "$stop_timeout"
    rm -f "$pid_file" "$args_file"
}

# What a stopped or failed provider leaves: its pid and args files.
forget_pid() { rm -f "$pid_file" "$args_file"; }

cmd_stop() { peer_stop "$@"; }

cmd_status() {
    [ $# -le 1 ] || usage
    local pid port issuer
    pid=$(running_pid) || die "not running"
    port=${1:-$(running_port)}
    port=${port:-$default_port}
    check_port "$port"
    [ -x "$venv/bin/python" ] || die "running (PID $pid) but $venv is missing"
    issuer=$(issuer_at "$port") || die "running (PID $pid) but http://127.0.0.1:$port/.well-known/openid-configuration does not answer 200"
    echo "$issuer"
}

peer_main "$@"
