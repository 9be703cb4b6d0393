#!/usr/bin/env bash
# Installs the system packages swift-oidc builds against (and curl and jq, which `make demo` uses),
# if any is missing (Debian/Ubuntu). `scripts/install-deps.sh test` adds what the test suite runs:
# PostgreSQL's server (a throw-away cluster for OIDCPostgres, see scripts/postgres.sh) and PgBouncer
# (in front of it, for the tests of the store behind a connection pooler).
# Elsewhere it only says what to install.
set -euo pipefail

packages=(libssl-dev libjwt-dev pkg-config curl jq)
[ "${1:-}" = test ] && packages+=(postgresql pgbouncer)

if ! command -v dpkg >/dev/null 2>&1; then
    echo "install-deps: not a Debian system; make sure OpenSSL 3, libjwt and pkg-config are installed" >&2
    exit 0
fi

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
