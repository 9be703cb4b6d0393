#!/usr/bin/env bash
# The main job, as far as the project goes today: a full authorization-code login with PKCE against
# the embedded test provider. `oidc` builds the authorization URL and verifies the ID token; curl
# plays the browser and the token request until `oidc login` lands.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product oidc >&2
oidc=$(swift build --show-bin-path)/oidc
work=$(mktemp -d)
trap 'kill "$provider_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

"$oidc" --version
"$oidc" provider --port 0 > "$work/issuer" 2> "$work/provider.log" &
provider_pid=$!
for _ in $(seq 100); do [ -s "$work/issuer" ] && break; sleep 0.1; done
issuer=$(head -n 1 "$work/issuer")
[ -n "$issuer" ] || { echo "demo: the test provider did not start" >&2; cat "$work/provider.log" >&2; exit 1; }
echo "== 1. the embedded provider is up: $issuer"
curl -fsS "$issuer/.well-known/openid-configuration" | jq '{issuer, authorization_endpoint, token_endpoint, jwks_uri}'

redirect=http://127.0.0.1:8765/callback
echo "== 2. authorization URL (state, nonce and PKCE S256 from the CSPRNG):"
"$oidc" authorize-url --authorization-endpoint "$issuer/authorize" --issuer "$issuer" --client-id test-client \
    --redirect-uri "$redirect" --scope openid --scope profile --scope offline_access --output json > "$work/request.json"
jq -r .url "$work/request.json"

echo "== 3. the browser signs in and is redirected back:"
location=$(curl -fsS -o /dev/null -w '%{redirect_url}' "$(jq -r .url "$work/request.json")")
echo "${location%%\?*}?code=<redacted>&state=…&iss=…"
query=${location#*\?}
param() { local v; v=$(tr '&' '\n' <<< "$query" | sed -n "s/^$1=//p"); v=${v//+/ }; printf '%b' "${v//%/\\x}"; }
[ "$(param state)" = "$(jq -r .state "$work/request.json")" ] || { echo "demo: state mismatch" >&2; exit 4; }
[ "$(param iss)" = "$issuer" ] || { echo "demo: iss mismatch (RFC 9207)" >&2; exit 4; }

echo "== 4. code exchange with the PKCE verifier:"
curl -fsS "$issuer/token" --data-urlencode grant_type=authorization_code --data-urlencode "code=$(param code)" \
    --data-urlencode "redirect_uri=$redirect" --data-urlencode client_id=test-client \
    --data-urlencode "code_verifier=$(jq -r .code_verifier "$work/request.json")" > "$work/tokens.json"
jq '{token_type, expires_in, scope, access_token: "<redacted>", refresh_token: "<redacted>", id_token: "<redacted>"}' "$work/tokens.json"

echo "== 5. the ID token, verified through OpenSSL against the provider's JWKS (nonce and at_hash included):"
jq -r .id_token "$work/tokens.json" | "$oidc" verify - --issuer "$issuer" --audience test-client --jwks "$issuer/jwks" \
    --nonce "$(jq -r .nonce "$work/request.json")" --access-token "$(jq -r .access_token "$work/tokens.json")" | jq .
echo "== done: logged in as $(jq -r .id_token "$work/tokens.json" | "$oidc" decode - 2>/dev/null | jq -r .claims.sub)"
