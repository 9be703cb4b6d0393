#!/usr/bin/env bash
# Builds and tests every package under Examples/ and runs each README's command, in the package's
# own build directory (.build; EXAMPLES_SCRATCH names another), so swift-nio, swift-crypto and the
# library, already built by `make test`'s earlier steps, are not compiled again: only what an
# example adds is (its sources, Hummingbird). Sharing is safe both ways: the package's next build
# after the examples is a null build.
# Name examples to do only those: scripts/examples.sh DaemonWithClientCredentials
# MCPClient's tests and its README command run against the MCP server from PyPI that
# scripts/mcp-server.sh starts (on MCP_PORT, 9420 by default, and the next port), stopped at the end.
# SWIFT_BUILD_FLAGS (the Makefile's extra flags, none by default) is passed to every
# build here, so the library's modules that make test built are not built again.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a flags <<< "${SWIFT_BUILD_FLAGS:-}"
root=$PWD
scratch=${EXAMPLES_SCRATCH:-$root/.build}
state=$(mktemp -d)
provider_pid=
mcp_port=${MCP_PORT:-9420}
mcp_started=
trap '[ -z "$provider_pid" ] || kill "$provider_pid" 2>/dev/null || true; [ -z "$mcp_started" ] || scripts/mcp-server.sh stop "$mcp_port" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
export XDG_STATE_HOME=$state   # the demos keep their logins here, not in your home

all=(TerminalLogin SwanBackend SchibstedLogin TestingWithInjectedTokens DaemonWithClientCredentials ProtectedAPI WebSignIn OpenAPIClient MCPClient)
if [ $# -gt 0 ]; then examples=("$@"); else examples=("${all[@]}"); fi
for example in "${examples[@]}"; do
    [[ " ${all[*]} " == *" $example "* ]] || { echo "examples.sh: no example '$example' (${all[*]})" >&2; exit 2; }
done
wanted() { [[ " ${examples[*]} " == *" $1 "* ]]; }

if wanted MCPClient; then
    echo "== Examples/MCPClient: the MCP server from PyPI on 127.0.0.1:$mcp_port (scripts/mcp-server.sh)"
    mcp_started=1
    mcp=$(scripts/mcp-server.sh start "$mcp_port")
    eval "$mcp"
fi

for example in "${examples[@]}"; do
    echo "== Examples/$example: build and test"
    (cd "Examples/$example" && swift build "${flags[@]}" --scratch-path "$scratch" --build-tests && swift test "${flags[@]}" --scratch-path "$scratch" --skip-build)
done

# Each README's command, as written there (run inside the example's directory).
run() {
    local example=$1; shift
    echo "== Examples/$example: $*"
    (cd "Examples/$example" && timeout 300 swift run "${flags[@]}" --scratch-path "$scratch" --skip-build "$@")
}
if wanted TerminalLogin; then
    # Without a display or $BROWSER, the demo signs in over HTTP itself instead of waiting for a click.
    (unset DISPLAY WAYLAND_DISPLAY BROWSER; run TerminalLogin terminal-login --demo)
fi
if wanted SwanBackend; then
    run SwanBackend swan-backend --demo
    # Again with its sessions in PostgreSQL, when there is a server (make examples starts one).
    if [ -n "${OIDC_TEST_DATABASE_URL:-}" ]; then
        (export DATABASE_URL=$OIDC_TEST_DATABASE_URL OIDC_TOKEN_KEY=$(openssl rand -hex 32); run SwanBackend swan-backend --demo)
    fi
fi
if wanted SchibstedLogin; then
    run SchibstedLogin schibsted-login --demo --mfa otp
fi
if wanted DaemonWithClientCredentials; then
    run DaemonWithClientCredentials report-daemon --demo
    # The README's second run: `oidc provider` in another process, the daemon with a client secret.
    # It needs the oidc command; make test builds it (make release) before the examples.
    oidc=${OIDC_BINARY:-$root/.build/install/bin/oidc}
    if [ -x "$oidc" ]; then
        (umask 077; openssl rand -hex 32 > "$state/report-daemon-secret")
        echo "== Examples/DaemonWithClientCredentials: oidc provider --port 9410 --client-id report-daemon --client-secret-file …"
        "$oidc" provider --port 9410 --client-id report-daemon --client-secret-file "$state/report-daemon-secret" > "$state/issuer" &
        provider_pid=$!
        for _ in $(seq 100); do [ -s "$state/issuer" ] && break; kill -0 "$provider_pid" || exit 1; sleep 0.1; done
        (export OIDC_ISSUER=http://127.0.0.1:9410 OIDC_CLIENT_ID=report-daemon OIDC_CLIENT_SECRET_FILE=$state/report-daemon-secret \
            OIDC_SCOPE=reports.read API_URL=http://127.0.0.1:9410/api/me
         run DaemonWithClientCredentials report-daemon --parallel 5)
        kill "$provider_pid"; wait "$provider_pid" || true; provider_pid=
    else
        echo "== Examples/DaemonWithClientCredentials: the run against 'oidc provider' is skipped: no $oidc (make release builds it)"
    fi
fi
if wanted ProtectedAPI; then
    run ProtectedAPI protected-api --demo
    # Both programs take oidc resource-server's flags and answer as it does: the command's own
    # tests run against each (OIDC_RESOURCE_SERVER_COMMAND; the package's tests, built by make test).
    bin=$(cd Examples/ProtectedAPI && swift build "${flags[@]}" --scratch-path "$scratch" --show-bin-path)
    for program in protected-api protected-api-vapor; do
        echo "== Examples/ProtectedAPI: oidc resource-server's tests against $program"
        OIDC_RESOURCE_SERVER_COMMAND=$bin/$program swift test "${flags[@]}" --scratch-path "$scratch" \
            --filter 'OIDCCLITests\.(ResourceServerCommandTests|ResourceServerIntrospectionTests)'
    done
fi
if wanted WebSignIn; then
    run WebSignIn web-sign-in --demo
fi
if wanted MCPClient; then
    # Without a display or $BROWSER, the client follows the login's redirects over HTTP itself (the
    # test server approves at once); the second run uses the kept login, and the tool that needs
    # mcp:admin makes it log in once more for it (the README's --call).
    (unset DISPLAY WAYLAND_DISPLAY BROWSER; run MCPClient mcp-client --resource "$OIDC_MCP_RESOURCE")
    (unset DISPLAY WAYLAND_DISPLAY BROWSER; run MCPClient mcp-client --resource "$OIDC_MCP_RESOURCE" --call admin_report)
fi
echo "== ${#examples[@]} example(s) built, tested and run"
