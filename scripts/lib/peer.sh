# Shared by the scripts that run a test peer in the background (mock-provider.sh, dot-provider.sh,
# mcp-server.sh, glewlwyd.sh): sourced, not run. The sourcing script defines `die` (message, exit 1) and sets
# `peer` (its name, for messages) first.

# Fails with a usage message unless $1 is a port number (1-65535).
check_port() {
    if ! [[ $1 =~ ^[1-9][0-9]{0,4}$ ]] || [ "$1" -gt 65535 ]; then
        die "invalid port '$1'"
    fi
}

# pid_in PID_FILE PATTERN: the PID in the file, if that process is alive and its command line
# contains PATTERN (not a reused PID).
pid_in() {
    local pid_file=$1 pattern=$2 pid command
    [ -f "$pid_file" ] || return 1
    pid=$(cat "$pid_file" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    kill -0 "$pid" 2>/dev/null || return 1
    if [ -r "/proc/$pid/cmdline" ]; then
        command=$(tr '\0' ' ' <"/proc/$pid/cmdline")
    else
        command=$(ps -p "$pid" -o command= 2>/dev/null) || return 1
    fi
    [[ $command == *"$pattern"* ]] || return 1
    echo "$pid"
}

# tcp_port_in_use PYTHON PORT: whether something accepts connections on 127.0.0.1:PORT.
tcp_port_in_use() {
    "$1" - "$2" <<'PY'
import socket, sys
with socket.socket() as s:
    s.settimeout(1)
    sys.exit(0 if s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0 else 1)
PY
}

# ensure_venv PYTHON VENV REQUIREMENTS WHO [PROGRAM]: a virtualenv at VENV (made with `PYTHON -m venv`,
# made again when broken) holding REQUIREMENTS, installed again when the file changed (a hash in
# VENV/.requirements.sha256) or when VENV/bin/PROGRAM is missing. WHO says what needs Python 3.10+.
ensure_venv() {
    local python=$1 venv=$2 requirements=$3 who=$4 program=${5:-} stamp="$2/.requirements.sha256" want have=""
    [ -f "$requirements" ] || die "missing $requirements"
    if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c 'import sys' 2>/dev/null; then
        echo "$peer: $venv is broken, making it again" >&2
        rm -rf "$venv"
    fi
    if [ ! -x "$venv/bin/python" ]; then
        command -v "$python" >/dev/null 2>&1 || die "$python not found (set PYTHON to a Python 3.10+)"
        "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
            die "$python is older than 3.10, which $who needs (set PYTHON)"
        "$python" -m venv "$venv" >&2 || die "could not make a virtualenv with '$python -m venv' (on Debian: apt-get install python3-venv)"
        rm -f "$stamp"
    fi
    want=$("$venv/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$requirements")
    [ -f "$stamp" ] && have=$(cat "$stamp")
    if [ "$want" != "$have" ] || { [ -n "$program" ] && [ ! -x "$venv/bin/$program" ]; }; then
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2 ||
            die "pip could not install $requirements into $venv"
        echo "$want" >"$stamp"
    fi
}

# stop_process PID TIMEOUT: SIGTERM, at most TIMEOUT seconds, then SIGKILL and at most 5 s more;
# fails when it still runs.
stop_process() {
    local pid=$1 timeout=$2 i
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < timeout * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "$peer: PID $pid still running ${timeout}s after SIGTERM; sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
    fi
    kill -0 "$pid" 2>/dev/null && die "PID $pid did not stop"
    return 0
}

# The sourcing script's state, with defaults it may redefine after sourcing: the running peer's
# port, and what a stopped or failed peer leaves behind (its pid file).
running_port() { cat "$port_file" 2>/dev/null || true; }
forget_pid() { rm -f "$pid_file"; }

# launch_detached LOG PROGRAM ARGS...: starts PROGRAM in the background in its own session (setsid,
# then exec: the PID stays the program's), stdin from /dev/null and output appended to LOG, so that
# the caller's pipes are not held open and a Ctrl-C to the caller's process group does not reach
# it; prints its PID. The script's $venv/bin/python does the setsid; a `cd` before it (in the same
# command substitution) gives PROGRAM its directory.
launch_detached() {
    local log=$1
    shift
    "$venv/bin/python" -c '
import os, sys
try:
    os.setsid()
except OSError:
    pass
os.execv(sys.argv[1], sys.argv[1:])
' "$@" </dev/null >>"$log" 2>&1 &
    echo "$!"
}

# await_start PID WHAT: waits at most $start_timeout s for the script's `ready` (which prints what a
# start prints, and fails while the peer does not answer); WHAT names what answers, for the error.
# The peer exiting, or the time running out (then it is stopped), fails with the end of $log_file.
await_start() {
    local pid=$1 what=$2 deadline=$((SECONDS + start_timeout))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            forget_pid
            echo "$peer: it exited at start; the end of $log_file:" >&2
            tail -n 20 "$log_file" >&2 || true
            exit 1
        fi
        ready && return 0
        sleep 0.3
    done
    echo "$peer: no 200 from $what within ${start_timeout}s; stopping it. The end of $log_file:" >&2
    tail -n 20 "$log_file" >&2 || true
    stop_pid "$pid"
    exit 1
}

# stop [PORT]: stops the running peer (the script's running_pid and stop_pid), after checking that
# it runs on PORT when one is given. Not running: succeeds.
peer_stop() {
    [ $# -le 1 ] || usage
    [ $# -eq 0 ] || check_port "$1"
    local pid port
    if ! pid=$(running_pid); then
        forget_pid
        echo "$peer: not running" >&2
        return 0
    fi
    port=$(running_port)
    if [ $# -eq 1 ] && [ -n "$port" ] && [ "$1" != "$port" ]; then
        die "the running $peer (PID $pid) is on port $port, not $1"
    fi
    stop_pid "$pid"
    echo "$peer: stopped (PID $pid)" >&2
}

# peer_main ARGS...: the scripts' command line: start, stop, status (the script's cmd_start,
# cmd_stop and cmd_status), or help (the script's header comment).
peer_main() {
    [ $# -ge 1 ] || usage
    local command=$1
    shift
    case "$command" in
        start) cmd_start "$@" ;;
        stop) cmd_stop "$@" ;;
        status) cmd_status "$@" ;;
        -h | --help | help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" ;;
        *) usage ;;
    esac
}
