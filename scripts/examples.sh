#!/usr/bin/env bash
# Builds and tests every package under Examples/ and runs each README's command, in one shared
# build directory (.build-examples), so swift-nio and the library are compiled once for all four.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch=$root/.build-examples
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
export XDG_STATE_HOME=$state   # the demos keep their logins here, not in your home

examples=(TerminalLogin SwanBackend SchibstedLogin TestingWithInjectedTokens)
for example in "${examples[@]}"; do
    echo "== Examples/$example: build and test"
    (cd "Examples/$example" && swift build --scratch-path "$scratch" --build-tests && swift test --scratch-path "$scratch" --skip-build)
done

# Each README's command, as written there (run inside the example's directory).
run() {
    local example=$1; shift
    echo "== Examples/$example: $*"
    (cd "Examples/$example" && timeout 300 swift run --scratch-path "$scratch" "$@")
}
# Without a display or $BROWSER, the demo signs in over HTTP itself instead of waiting for a click.
(unset DISPLAY WAYLAND_DISPLAY BROWSER; run TerminalLogin terminal-login --demo)
run SwanBackend swan-backend --demo
# Again with its sessions in PostgreSQL, when there is a server (make examples starts one).
if [ -n "${OIDC_TEST_DATABASE_URL:-}" ]; then
    (export DATABASE_URL=$OIDC_TEST_DATABASE_URL OIDC_TOKEN_KEY=$(openssl rand -hex 32); run SwanBackend swan-backend --demo)
fi
run SchibstedLogin schibsted-login --demo --mfa otp
echo "== all examples built, tested and run"
