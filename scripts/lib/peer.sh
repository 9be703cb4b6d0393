# Shared by the scripts that run a test peer in the background (mock-provider.sh, dot-provider.sh,
# glewlwyd.sh): sourced, not run. The sourcing script defines `die` (message, exit 1) and sets
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
