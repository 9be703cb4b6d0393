#!/usr/bin/env bash
# Installs requests-oauth2client 1.8.0 (PyPI), an independent DPoP client (RFC 9449), for the test
# where it drives `oidc resource-server --dpop required --nonce` through its nonce challenge
# (Tests/OIDCCLITests/PythonDPoPClientTests.swift, which runs scripts/dpop-client.py with it).
# No root needed: everything lives under .build-dpop-client/ and belongs to whoever runs this.
#
#   scripts/dpop-client.sh install
#       Installs Tests/Interop/dpop-client-requirements.txt into .build-dpop-client/venv (made with
#       `python3 -m venv`, reused when present and its requirements unchanged) and prints the shell
#       line `export OIDC_DPOP_CLIENT_PYTHON=…/venv/bin/python`, which enables the test.
#   scripts/dpop-client.sh status
#       Installed and importable: prints the export line, exit 0. Otherwise says why on stderr, exit 1.
#
# Environment: PYTHON (default python3, 3.10 or newer) makes the virtualenv; DPOP_CLIENT_STATE_DIR
# (default .build-dpop-client).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state="${DPOP_CLIENT_STATE_DIR:-$root/.build-dpop-client}"
venv="$state/venv"
requirements="$root/Tests/Interop/dpop-client-requirements.txt"
python=${PYTHON:-python3}

peer=dpop-client
# shellcheck source=lib/peer.sh
. "$(dirname "$0")/lib/peer.sh"

die() {
    echo "dpop-client: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 install | status" >&2
    exit 2
}

# Whether the virtualenv imports the client and its version is the pinned one.
importable() {
    "$venv/bin/python" - "$requirements" <<'PY' 2>/dev/null
import re, sys
from importlib.metadata import version
import requests_oauth2client  # noqa: F401
pinned = re.search(r"^requests-oauth2client==(\S+)$", open(sys.argv[1]).read(), re.M).group(1)
sys.exit(0 if version("requests-oauth2client") == pinned else 1)
PY
}

case "${1:-}" in
install)
    [ $# -eq 1 ] || usage
    (umask 077 && mkdir -p "$state")
    ensure_venv "$python" "$venv" "$requirements" "requests-oauth2client 1.8"
    importable || die "requests-oauth2client is not importable from $venv after the install"
    echo "export OIDC_DPOP_CLIENT_PYTHON='$venv/bin/python'"
    ;;
status)
    [ $# -eq 1 ] || usage
    [ -x "$venv/bin/python" ] || die "not installed (run: $0 install)"
    importable || die "$venv does not hold the pinned requests-oauth2client (run: $0 install)"
    echo "export OIDC_DPOP_CLIENT_PYTHON='$venv/bin/python'"
    ;;
*) usage ;;
esac
