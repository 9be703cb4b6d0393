#!/usr/bin/env bash
# The main job, as far as the project goes today: build `oidc` and print Schibsted, Swan and generic
# authorization URLs, one of them with the state, nonce and PKCE values a login would keep.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product oidc >&2
oidc=$(swift build --show-bin-path)/oidc

"$oidc" --version
echo "== Schibsted (pre), MFA by one-time code, deterministic:"
"$oidc" authorize-url --provider schibsted --environment pre --client-id 602525f2b41fa31789a95aa8 \
    --redirect-uri com.example.app:/login --scope email --mfa otp \
    --state aBcDeFgHiJ --nonce kLmNoPqRsT --code-verifier dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk
echo "== Swan, random state, nonce and verifier:"
"$oidc" authorize-url --provider swan --client-id SANDBOX_demo --redirect-uri https://app.example/swan/callback
echo "== Generic provider, as JSON with what the code exchange will need:"
"$oidc" authorize-url --authorization-endpoint https://idp.example/authorize --issuer https://idp.example \
    --client-id demo-cli --redirect-uri http://127.0.0.1:8765/callback --scope openid --scope profile --output json
