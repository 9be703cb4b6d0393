#!/usr/bin/env bash
# Installs the independent JWT bearer grant server of the tests, scripts/jwt-bearer-server.py (Authlib's
# JWTBearerGrant in a Flask app), into the virtualenv the mock provider uses: .build-interop/venv, from
# Tests/Interop/requirements.txt (Authlib, Flask, joserfc; reused when present). The tests start the server
# themselves, on a free port of 127.0.0.1, with keys they make (Tests/OIDCCLITests/AuthlibJWTBearerTests.swift).
# No root needed. See docs/interop.md.
#
#   scripts/jwt-bearer-server.sh install
#       Makes or updates the virtualenv, checks that Authlib's JWTBearerGrant imports, and prints
#       `export OIDC_AUTHLIB_PYTHON='…/venv/bin/python'` on stdout.
#   scripts/jwt-bearer-server.sh status
#       Installed: prints that line, exit 0. Otherwise says why on stderr, exit 1.
#
# Environment: PYTHON (default python3, 3.10 or newer) makes the virtualenv.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
state="$root/.build-interop"
venv="$state/venv"
requirements="$root/Tests/Interop/requirements.txt"
python=${PYTHON:-python3}

peer=jwt-bearer-server
# shellcheck source=lib/peer.sh
. "$(dirname "$0")/lib/peer.sh"

die() {
    echo "jwt-bearer-server: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 install | status" >&2
    exit 2
}

importable() { "$venv/bin/python" -c 'from authlib.oauth2.rfc7523 import JWTBearerGrant; import flask, joserfc' 2>/dev/null; }

case "${1:-}" in
install)
    [ $# -eq 1 ] || usage
    mkdir -p "$state"
    ensure_venv "$python" "$venv" "$requirements" "Authlib 1.9"
    importable || die "Authlib's JWTBearerGrant is not importable from $venv after the install"
    echo "export OIDC_AUTHLIB_PYTHON='$venv/bin/python'"
    ;;
status)
    [ $# -eq 1 ] || usage
    [ -x "$venv/bin/python" ] || die "not installed (run: $0 install)"
    importable || die "$venv does not hold Authlib's JWTBearerGrant (run: $0 install)"
    echo "export OIDC_AUTHLIB_PYTHON='$venv/bin/python'"
    ;;
*) usage ;;
esac
