#!/usr/bin/env bash
# Installs the system packages swift-oidc builds against (and curl and jq, which `make demo` uses),
# if any is missing (Debian/Ubuntu): libqrencode's header is one of them (the `oidc` target includes
# <qrencode.h>). `scripts/install-deps.sh test` adds what the test suite runs: PostgreSQL's server (a
# throw-away cluster for OIDCPostgres, see scripts/postgres.sh), PgBouncer (in front of it, for the
# tests of the store behind a connection pooler), glewlwyd (the second independent OpenID provider of
# the interop tests, see docs/glewlwyd.md), zbar-tools (`zbarimg` decodes the CLI's QR codes) and
# python3-venv (the virtualenvs of the PyPI peers: scripts/mock-provider.sh, scripts/dot-provider.sh),
# chromium and chromium-driver (a real browser for the web sign-in's tests, headless);
# `scripts/install-deps.sh bench` adds the benchmarks' tools (hyperfine, time, wrk).
# Elsewhere it only says what to install.
set -euo pipefail

packages=(libssl-dev libjwt-dev libqrencode-dev pkg-config curl jq)
[ "${1:-}" = test ] && packages+=(postgresql pgbouncer glewlwyd zbar-tools python3-venv chromium chromium-driver)
# `scripts/install-deps.sh bench` (make bench): hyperfine and time (start-up), wrk (the HTTP servers).
[ "${1:-}" = bench ] && packages+=(hyperfine time wrk)

if ! command -v dpkg >/dev/null 2>&1; then
    echo "install-deps: not a Debian system; make sure OpenSSL 3, libjwt, libqrencode 4 and pkg-config are installed" >&2
    exit 0
fi

# As an ordinary user, SwiftPM must be able to read a local package mirror that root owns.
"$(dirname "$0")/trust-package-mirror.sh"

missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null

# Debian's glewlwyd package enables and starts a system service on port 4593 of every interface;
# the tests run their own instance on 127.0.0.1 (scripts/glewlwyd.sh), so the one installed here is
# stopped and disabled. Only when this run installed it, and only under systemd.
if [[ " ${missing[*]} " == *" glewlwyd "* ]] && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now glewlwyd.service >/dev/null 2>&1 || true
fi
