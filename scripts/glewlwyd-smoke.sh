#!/usr/bin/env bash
# Proves, with curl and python3 only, each grant the interop tests need against glewlwyd 2.7.5 on
# 127.0.0.1. See docs/glewlwyd.md.
#
#   scripts/glewlwyd-smoke.sh [--tls]
#       Uses the provider of scripts/glewlwyd.sh if it runs, else starts it (with --tls or
#       GLEWLWYD_TLS=1: in its HTTPS mode, which adds the mTLS step) and stops it at the end, unless
#       GLEWLWYD_SMOKE_KEEP=1. Each step prints PASS, FAIL, or INFO (what glewlwyd does not
#       support, said without failing); the last line is "N passed, N failed". Exit status 1 on any
#       FAIL. Every request has a 10 s limit, every loop a bound; only 127.0.0.1 is contacted.
#
# Steps: discovery metadata; device flow (authorization_pending, slow_down, approval by
# scripts/glewlwyd-agent.py, tokens); code + PKCE and refresh; client credentials with
# client_secret_basic and client_secret_post; private_key_jwt (which `aud` is accepted);
# client_secret_jwt; introspection and revocation; DPoP with the use_dpop_nonce round trip, a
# DPoP-bound client, and DPoP at the userinfo endpoint; PAR (201 + request_uri, then the code);
# mTLS (RFC 8705, HTTPS mode only: tls_client_auth and certificate-bound tokens); token exchange
# (RFC 8693), which glewlwyd 2.7.5 lacks, is reported as INFO.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
jose="python3 $root/scripts/glewlwyd-jose.py"
agent="python3 $root/scripts/glewlwyd-agent.py"
tmp=$(mktemp -d /tmp/glewlwyd-smoke.XXXXXX)
started_here=""
start_args=()
case "${1:-}" in
    --tls) start_args=(--tls) ;;
    "") [ "${GLEWLWYD_TLS:-}" != 1 ] || start_args=(--tls) ;;
    *) echo "usage: $0 [--tls]" >&2; exit 2 ;;
esac
curl_tls=()
passed=0
failed=0

finish() {
    rm -rf "$tmp"
    if [ -n "$started_here" ] && [ "${GLEWLWYD_SMOKE_KEEP:-}" != 1 ]; then
        "$root/scripts/glewlwyd.sh" stop >/dev/null 2>&1 || true
    fi
}
trap finish EXIT
trap 'exit 130' INT TERM

pass() { passed=$((passed + 1)); echo "PASS  $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }
info() { echo "INFO  $*"; }
# run_step FUNCTION LABEL: PASS or FAIL with the step's duration.
run_step() {
    local began=$SECONDS
    if "$1"; then pass "$2 ($((SECONDS - began)) s)"; else fail "$2 ($((SECONDS - began)) s)"; fi
}
note() { echo "      $*"; }

# req METHOD URL [CURL-ARGS...]: the status on stdout; body in $tmp/body, headers in $tmp/headers.
req() {
    local method=$1 url=$2
    shift 2
    case "$url" in http://127.0.0.1:* | https://127.0.0.1:*) ;; *) echo "smoke: refusing non-loopback URL $url" >&2; return 1 ;; esac
    curl -sS --max-time 10 "${curl_tls[@]}" -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' -X "$method" "$url" "$@" || true
}
# jget FILE KEY...: the value of a JSON member (nested keys allowed; lists joined by spaces), or empty.
jget() {
    python3 - "$@" <<'PY'
import json, sys
try:
    value = json.load(open(sys.argv[1]))
    for key in sys.argv[2:]:
        value = value[key]
except Exception:
    sys.exit(0)
print(" ".join(map(str, value)) if isinstance(value, list) else (json.dumps(value) if isinstance(value, (dict, bool)) else value))
PY
}
header() { grep -i "^$1:" "$tmp/headers" | head -n 1 | cut -d' ' -f2- | tr -d '\r' || true; }
body() { head -c "${1:-300}" "$tmp/body"; }
claims() { $jose decode "$1" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["payload"]))'; }
pkce_pair() { # prints VERIFIER CHALLENGE
    python3 -c 'import base64, hashlib, secrets
v = secrets.token_urlsafe(48)
print(v, base64.urlsafe_b64encode(hashlib.sha256(v.encode()).digest()).rstrip(b"=").decode())'
}
urlencode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
query_param() { python3 -c 'import sys, urllib.parse
q = urllib.parse.parse_qs(urllib.parse.urlsplit(sys.argv[1]).query)
print(q.get(sys.argv[2], [""])[0])' "$1" "$2"; }

# --- the provider ---
if ! "$root/scripts/glewlwyd.sh" status >"$tmp/env.sh" 2>/dev/null; then
    "$root/scripts/glewlwyd.sh" start "${start_args[@]}" >"$tmp/env.sh"
    started_here=1
fi
# shellcheck disable=SC1091
. "$tmp/env.sh"
[ -z "${OIDC_GLEWLWYD_CA_FILE:-}" ] || curl_tls=(--cacert "$OIDC_GLEWLWYD_CA_FILE")
iss=$OIDC_GLEWLWYD_ISSUER
token_endpoint="$iss/token"
secret() { head -n 1 "$1"; }
conf_id=$OIDC_GLEWLWYD_CONFIDENTIAL_CLIENT_ID
conf_secret=$(secret "$OIDC_GLEWLWYD_CONFIDENTIAL_CLIENT_SECRET_FILE")
echo "glewlwyd at $OIDC_GLEWLWYD_ORIGIN, issuer $iss"

# --- 1. discovery ---
step_discovery() {
    local status
    status=$(req GET "$iss/.well-known/openid-configuration")
    cp "$tmp/body" "$tmp/discovery.json"
    [ "$status" = 200 ] || { note "HTTP $status"; return 1; }
    python3 - "$tmp/discovery.json" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
for member in ("issuer authorization_endpoint token_endpoint userinfo_endpoint jwks_uri "
               "device_authorization_endpoint introspection_endpoint revocation_endpoint "
               "pushed_authorization_request_endpoint require_pushed_authorization_requests "
               "dpop_signing_alg_values_supported token_endpoint_auth_methods_supported "
               "token_endpoint_auth_signing_alg_values_supported introspection_endpoint_auth_methods_supported "
               "revocation_endpoint_auth_methods_supported grant_types_supported response_types_supported "
               "code_challenge_methods_supported authorization_response_iss_parameter_supported "
               "mtls_endpoint_aliases tls_client_certificate_bound_access_tokens").split():
    value = document.get(member, "(absent)")
    text = ", ".join(map(str, value)) if isinstance(value, list) else json.dumps(value) if isinstance(value, (dict, bool)) else value
    print(f"      {member:<48} {text}")
PY
    [ "$(jget "$tmp/discovery.json" issuer)" = "$iss" ] || { note "issuer differs from $iss"; return 1; }
    [ "$(jget "$tmp/discovery.json" token_endpoint)" = "$token_endpoint" ] || return 1
    [ -n "$(jget "$tmp/discovery.json" device_authorization_endpoint)" ] || return 1
    [ -n "$(jget "$tmp/discovery.json" introspection_endpoint)" ] || return 1
    [ -n "$(jget "$tmp/discovery.json" pushed_authorization_request_endpoint)" ] || return 1
    status=$(req GET "$OIDC_GLEWLWYD_PAR_ISSUER/.well-known/openid-configuration")
    note "oidc-par: require_pushed_authorization_requests = $(jget "$tmp/body" require_pushed_authorization_requests)"
    [ "$(jget "$tmp/body" require_pushed_authorization_requests)" = true ] || return 1
}
run_step step_discovery "discovery document ($iss/.well-known/openid-configuration)"

# --- 2. device flow ---
step_device() {
    local status device_code user_code interval expires saw_pending="" saw_slow="" error deadline polls=0
    status=$(req POST "$iss/device_authorization" -d "client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID" \
        --data-urlencode "scope=openid $OIDC_GLEWLWYD_SCOPE")
    [ "$status" = 200 ] || { note "device_authorization: HTTP $status $(body)"; return 1; }
    device_code=$(jget "$tmp/body" device_code)
    user_code=$(jget "$tmp/body" user_code)
    interval=$(jget "$tmp/body" interval)
    expires=$(jget "$tmp/body" expires_in)
    note "device_authorization: user_code=$user_code interval=$interval expires_in=$expires verification_uri=$(jget "$tmp/body" verification_uri)"
    poll() {
        req POST "$token_endpoint" -d "client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID" \
            -d grant_type=urn:ietf:params:oauth:grant-type:device_code -d "device_code=$device_code"
    }
    # Two polls back to back, before the user acts: pending, then slow_down (polled too fast).
    status=$(poll)
    error=$(jget "$tmp/body" error)
    note "poll 1 (at once): HTTP $status error=$error"
    [ "$error" = authorization_pending ] && saw_pending=1
    status=$(poll)
    error=$(jget "$tmp/body" error)
    note "poll 2 (0 s later): HTTP $status error=$error"
    [ "$error" = slow_down ] && saw_slow=1
    $agent device "$user_code" >"$tmp/agent.out" || { note "agent could not approve: $(cat "$tmp/agent.out")"; return 1; }
    note "agent: $(cat "$tmp/agent.out")"
    deadline=$((SECONDS + 60))
    while [ "$SECONDS" -lt "$deadline" ] && [ "$polls" -lt 30 ]; do
        sleep "$((interval + 1))"
        polls=$((polls + 1))
        status=$(poll)
        error=$(jget "$tmp/body" error)
        [ "$error" = authorization_pending ] && saw_pending=1
        [ "$error" = slow_down ] && saw_slow=1
        if [ "$status" = 200 ]; then
            note "poll $((polls + 2)): HTTP 200 token_type=$(jget "$tmp/body" token_type) scope=$(jget "$tmp/body" scope) refresh_token=$([ -n "$(jget "$tmp/body" refresh_token)" ] && echo yes) id_token=$([ -n "$(jget "$tmp/body" id_token)" ] && echo yes)"
            break
        fi
        note "poll $((polls + 2)): HTTP $status error=$error"
    done
    [ "$status" = 200 ] && [ -n "$(jget "$tmp/body" access_token)" ] || return 1
    [ -n "$saw_pending" ] || { note "authorization_pending never seen"; return 1; }
    [ -n "$saw_slow" ] || { note "slow_down never seen"; return 1; }
    status=$(poll)
    note "poll after the tokens: HTTP $status error=$(jget "$tmp/body" error)"
}
run_step step_device "device flow (RFC 8628): authorization_pending, slow_down, approval, tokens"

# --- 3. authorization code + PKCE, refresh ---
step_code() {
    local pair verifier challenge url redirect code status refresh
    pair=$(pkce_pair)
    verifier=${pair% *}
    challenge=${pair#* }
    url="$iss/auth?response_type=code&client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID&redirect_uri=$(urlencode "$OIDC_GLEWLWYD_REDIRECT_URI")&scope=$(urlencode "openid $OIDC_GLEWLWYD_SCOPE")&state=st-123&nonce=n-456&code_challenge=$challenge&code_challenge_method=S256"
    redirect=$($agent authorize "$url") || { note "agent: $redirect"; return 1; }
    note "redirect: $(echo "$redirect" | sed 's/code=[^&]*/code=…/')"
    [ "$(query_param "$redirect" state)" = st-123 ] || return 1
    [ "$(query_param "$redirect" iss)" = "$iss" ] || { note "iss parameter missing or different"; return 1; }
    code=$(query_param "$redirect" code)
    status=$(req POST "$token_endpoint" -d grant_type=authorization_code -d "client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID" \
        --data-urlencode "redirect_uri=$OIDC_GLEWLWYD_REDIRECT_URI" -d "code=$code" -d "code_verifier=$verifier")
    [ "$status" = 200 ] || { note "token: HTTP $status $(body)"; return 1; }
    note "token: token_type=$(jget "$tmp/body" token_type) expires_in=$(jget "$tmp/body" expires_in) scope=$(jget "$tmp/body" scope)"
    note "id_token claims: $(claims "$(jget "$tmp/body" id_token)")"
    refresh=$(jget "$tmp/body" refresh_token)
    status=$(req POST "$token_endpoint" -d grant_type=refresh_token -d "client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID" -d "refresh_token=$refresh")
    [ "$status" = 200 ] || { note "refresh: HTTP $status $(body)"; return 1; }
    note "refresh: HTTP 200, new refresh_token: $([ -n "$(jget "$tmp/body" refresh_token)" ] && echo yes || echo no)"
    url="$iss/auth?response_type=code&client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID&redirect_uri=$(urlencode "$OIDC_GLEWLWYD_REDIRECT_URI")&scope=openid&state=s2&nonce=n2"
    redirect=$($agent authorize "$url") && { note "without PKCE the public client got a code"; return 1; }
    note "without PKCE: $redirect"
    url="$iss/auth?response_type=code&client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID&redirect_uri=$(urlencode "$OIDC_GLEWLWYD_REDIRECT_URI")&scope=openid&state=s3&code_challenge=$challenge&code_challenge_method=S256"
    redirect=$($agent authorize "$url") && { note "scope openid without nonce gave a code"; return 1; }
    note "scope openid without nonce: $redirect"
}
run_step step_code "authorization code + PKCE (S256) with the public client, refresh_token"

# --- 4. client credentials, client_secret_basic and client_secret_post ---
step_client_secret() {
    local status
    status=$(req POST "$token_endpoint" -u "$conf_id:$conf_secret" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE")
    [ "$status" = 200 ] || { note "basic: HTTP $status $(body)"; return 1; }
    cp "$tmp/body" "$tmp/cc-basic.json"
    note "basic: token_type=$(jget "$tmp/body" token_type) scope=$(jget "$tmp/body" scope) claims: $(claims "$(jget "$tmp/body" access_token)")"
    status=$(req POST "$token_endpoint" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE" \
        -d "client_id=$conf_id" --data-urlencode "client_secret=$conf_secret")
    [ "$status" = 200 ] || { note "post: HTTP $status $(body)"; return 1; }
    note "post: HTTP 200"
    status=$(req POST "$token_endpoint" -u "$conf_id:wrong" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE")
    note "wrong secret: HTTP $status body='$(body)'"
    status=$(req POST "$token_endpoint" -u "$conf_id:$conf_secret" -d grant_type=client_credentials)
    note "no scope: HTTP $status body='$(body)'"
}
run_step step_client_secret "client credentials with client_secret_basic and client_secret_post"

# --- 5. private_key_jwt ---
step_private_key_jwt() {
    local id=$OIDC_GLEWLWYD_PRIVATE_KEY_JWT_CLIENT_ID key=$OIDC_GLEWLWYD_PRIVATE_KEY_JWT_CLIENT_KEY_FILE
    local kid=$OIDC_GLEWLWYD_PRIVATE_KEY_JWT_CLIENT_KID aud status ok=""
    for aud in "$token_endpoint" "$iss"; do
        status=$(req POST "$token_endpoint" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE" \
            -d client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer \
            -d "client_assertion=$($jose assertion --key "$key" --kid="$kid" --client-id "$id" --aud "$aud")")
        note "aud=$aud: HTTP $status $( [ "$status" = 200 ] && echo "token_type=$(jget "$tmp/body" token_type)" || echo "body='$(body)'")"
        if [ "$aud" = "$token_endpoint" ] && [ "$status" = 200 ]; then ok=1; cp "$tmp/body" "$tmp/cc-jwt.json"; fi
    done
    status=$(req POST "$token_endpoint" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE" \
        -d client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer \
        -d "client_assertion=$($jose assertion --key "$key" --client-id "$id" --aud "$token_endpoint")")
    note "no kid in the header: HTTP $status"
    [ -n "$ok" ]
}
run_step step_private_key_jwt "client credentials with private_key_jwt (RS256, aud = token endpoint URL)"

# --- 6. client_secret_jwt ---
step_client_secret_jwt() {
    local id=$OIDC_GLEWLWYD_CLIENT_SECRET_JWT_CLIENT_ID status
    status=$(req POST "$token_endpoint" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE" \
        -d client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer \
        -d "client_assertion=$($jose assertion --secret-file "$OIDC_GLEWLWYD_CLIENT_SECRET_JWT_CLIENT_SECRET_FILE" --client-id "$id" --aud "$token_endpoint")")
    note "HS256, aud=$token_endpoint: HTTP $status"
    [ "$status" = 200 ]
}
run_step step_client_secret_jwt "client credentials with client_secret_jwt (HS256)"

# --- 7. introspection and revocation ---
step_introspection() {
    local token status
    token=$(jget "$tmp/cc-basic.json" access_token)
    [ -n "$token" ] || { note "no token from step 4"; return 1; }
    status=$(req POST "$iss/introspect" -u "$conf_id:$conf_secret" -d "token=$token" -d token_type_hint=access_token)
    note "introspect: HTTP $status $(body 400)"
    [ "$status" = 200 ] && [ "$(jget "$tmp/body" active)" = true ] || return 1
    [ "$(jget "$tmp/body" client_id)" = "$conf_id" ] || return 1
    status=$(req POST "$iss/introspect" -d "client_id=$conf_id" --data-urlencode "client_secret=$conf_secret" -d "token=$token")
    note "introspect with client_secret_post: HTTP $status active=$(jget "$tmp/body" active)"
    status=$(req POST "$iss/introspect" -d client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer \
        -d "client_assertion=$($jose assertion --key "$OIDC_GLEWLWYD_PRIVATE_KEY_JWT_CLIENT_KEY_FILE" --kid="$OIDC_GLEWLWYD_PRIVATE_KEY_JWT_CLIENT_KID" --client-id "$OIDC_GLEWLWYD_PRIVATE_KEY_JWT_CLIENT_ID" --aud "$iss/introspect")" \
        -d "token=$token")
    note "introspect with private_key_jwt (aud = introspection endpoint), another client's token: HTTP $status active=$(jget "$tmp/body" active)"
    status=$(req POST "$iss/introspect" -u "$OIDC_GLEWLWYD_DPOP_CLIENT_ID:$(secret "$OIDC_GLEWLWYD_DPOP_CLIENT_SECRET_FILE")" -d "token=$token")
    note "introspect with client_secret_basic, another client's token: HTTP $status $(body)"
    status=$(req POST "$iss/introspect" -u "$conf_id:$conf_secret" -d token=not-a-token)
    note "unknown token: HTTP $status $(body)"
    [ "$(jget "$tmp/body" active)" = false ] || return 1
    status=$(req POST "$iss/revoke" -u "$conf_id:$conf_secret" -d "token=$token" -d token_type_hint=access_token)
    note "revoke: HTTP $status"
    [ "$status" = 200 ] || return 1
    status=$(req POST "$iss/introspect" -u "$conf_id:$conf_secret" -d "token=$token")
    note "introspect after revoke: HTTP $status $(body)"
    [ "$(jget "$tmp/body" active)" = false ]
}
run_step step_introspection "token introspection (RFC 7662) and revocation (RFC 7009)"

# --- 8. DPoP ---
step_dpop() {
    local id=$OIDC_GLEWLWYD_DPOP_CLIENT_ID dsecret key=$OIDC_GLEWLWYD_DPOP_KEY_FILE status nonce jkt token
    dsecret=$(secret "$OIDC_GLEWLWYD_DPOP_CLIENT_SECRET_FILE")
    status=$(req POST "$token_endpoint" -u "$id:$dsecret" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE")
    note "DPoP-bound client without a proof: HTTP $status $(body)"
    [ "$status" != 200 ] || return 1
    status=$(req POST "$token_endpoint" -u "$id:$dsecret" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE" \
        -H "DPoP: $($jose dpop --key "$key" --htm POST --htu "$token_endpoint")")
    nonce=$(header DPoP-Nonce)
    note "proof without nonce: HTTP $status DPoP-Nonce: ${nonce:-(none)} $(body)"
    [ "$(jget "$tmp/body" error)" = use_dpop_nonce ] && [ -n "$nonce" ] || return 1
    status=$(req POST "$token_endpoint" -u "$id:$dsecret" -d grant_type=client_credentials -d "scope=$OIDC_GLEWLWYD_SCOPE" \
        -H "DPoP: $($jose dpop --key "$key" --htm POST --htu "$token_endpoint" --nonce="$nonce")")
    note "proof with the nonce: HTTP $status token_type=$(jget "$tmp/body" token_type) DPoP-Nonce: $(header DPoP-Nonce)"
    [ "$status" = 200 ] && [ "$(jget "$tmp/body" token_type)" = DPoP ] || return 1
    jkt=$($jose thumbprint --key "$key")
    token=$(jget "$tmp/body" access_token)
    note "cnf.jkt=$(claims "$token" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("cnf", {}).get("jkt"))') (the key's thumbprint: $jkt)"
    claims "$token" | grep -q "\"jkt\": \"$jkt\"" || return 1
    status=$(req POST "$iss/introspect" -u "$id:$dsecret" -d "token=$token")
    note "introspection by $id: token_type=$(jget "$tmp/body" token_type) cnf=$(jget "$tmp/body" cnf)"
}
run_step step_dpop "DPoP (RFC 9449) token request with the use_dpop_nonce round trip, DPoP-bound client"

step_dpop_userinfo() {
    local key=$OIDC_GLEWLWYD_DPOP_KEY_FILE pair verifier challenge url redirect code status nonce token
    pair=$(pkce_pair)
    verifier=${pair% *}
    challenge=${pair#* }
    url="$iss/auth?response_type=code&client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID&redirect_uri=$(urlencode "$OIDC_GLEWLWYD_REDIRECT_URI")&scope=openid&state=s3&nonce=n3&code_challenge=$challenge&code_challenge_method=S256"
    redirect=$($agent authorize "$url") || { note "agent: $redirect"; return 1; }
    code=$(query_param "$redirect" code)
    form=(-d grant_type=authorization_code -d "client_id=$OIDC_GLEWLWYD_PUBLIC_CLIENT_ID" --data-urlencode "redirect_uri=$OIDC_GLEWLWYD_REDIRECT_URI" -d "code=$code" -d "code_verifier=$verifier")
    status=$(req POST "$token_endpoint" "${form[@]}" -H "DPoP: $($jose dpop --key "$key" --htm POST --htu "$token_endpoint")")
    nonce=$(header DPoP-Nonce)
    note "code exchange, public client, proof without nonce: HTTP $status error=$(jget "$tmp/body" error) DPoP-Nonce: ${nonce:-(none)}"
    [ -n "$nonce" ] || return 1
    status=$(req POST "$token_endpoint" "${form[@]}" -H "DPoP: $($jose dpop --key "$key" --htm POST --htu "$token_endpoint" --nonce="$nonce")")
    note "same code, proof with the nonce: HTTP $status token_type=$(jget "$tmp/body" token_type)"
    [ "$status" = 200 ] || return 1
    token=$(jget "$tmp/body" access_token)
    status=$(req GET "$iss/userinfo" -H "Authorization: DPoP $token" -H "DPoP: $($jose dpop --key "$key" --htm GET --htu "$iss/userinfo" --access-token="$token")")
    nonce=$(header DPoP-Nonce)
    note "userinfo, proof without nonce: HTTP $status WWW-Authenticate: $(header WWW-Authenticate) DPoP-Nonce: ${nonce:-(none)}"
    if [ "$status" != 200 ] && [ -n "$nonce" ]; then
        status=$(req GET "$iss/userinfo" -H "Authorization: DPoP $token" -H "DPoP: $($jose dpop --key "$key" --htm GET --htu "$iss/userinfo" --access-token="$token" --nonce="$nonce")")
        note "userinfo, proof with the nonce: HTTP $status $(body)"
    fi
    [ "$status" = 200 ] || return 1
    status=$(req GET "$iss/userinfo" -H "Authorization: Bearer $token")
    note "userinfo with the DPoP token as a Bearer token: HTTP $status"
}
run_step step_dpop_userinfo "DPoP with code + PKCE (public client) and at the userinfo endpoint (ath, resource nonce)"

# --- 9. PAR ---
step_par() {
    local par_iss=$OIDC_GLEWLWYD_PAR_ISSUER id=$OIDC_GLEWLWYD_PAR_CLIENT_ID psecret pair verifier challenge status request_uri url redirect code
    psecret=$(secret "$OIDC_GLEWLWYD_PAR_CLIENT_SECRET_FILE")
    pair=$(pkce_pair)
    verifier=${pair% *}
    challenge=${pair#* }
    status=$(req POST "$par_iss/par" -u "$id:$psecret" -d response_type=code -d "client_id=$id" \
        --data-urlencode "redirect_uri=$OIDC_GLEWLWYD_REDIRECT_URI" --data-urlencode "scope=openid $OIDC_GLEWLWYD_SCOPE" \
        -d state=par-state -d nonce=par-nonce -d "code_challenge=$challenge" -d code_challenge_method=S256)
    note "push: HTTP $status $(body)"
    [ "$status" = 201 ] || return 1
    request_uri=$(jget "$tmp/body" request_uri)
    [ -n "$request_uri" ] || return 1
    url="$par_iss/auth?client_id=$id&request_uri=$(urlencode "$request_uri")"
    redirect=$($agent authorize "$url") || { note "agent: $redirect"; return 1; }
    note "redirect: $(echo "$redirect" | sed 's/code=[^&]*/code=…/')"
    code=$(query_param "$redirect" code)
    status=$(req POST "$par_iss/token" -u "$id:$psecret" -d grant_type=authorization_code \
        --data-urlencode "redirect_uri=$OIDC_GLEWLWYD_REDIRECT_URI" -d "code=$code" -d "code_verifier=$verifier")
    note "token: HTTP $status"
    [ "$status" = 200 ] || return 1
    url="$par_iss/auth?response_type=code&client_id=$id&redirect_uri=$(urlencode "$OIDC_GLEWLWYD_REDIRECT_URI")&scope=openid&state=np&code_challenge=$challenge&code_challenge_method=S256"
    status=$(req GET "$url")
    note "oidc-par without PAR: HTTP $status Location: $(header Location)"
    [ "$status" != 200 ] && ! header Location | grep -q 'login.html'
}
run_step step_par "PAR (RFC 9126): 201 + request_uri, then the code; the PAR-only issuer refuses plain requests"

# --- 10. mTLS (HTTPS mode) ---
step_mtls() {
    local id=$OIDC_GLEWLWYD_MTLS_CLIENT_ID cert=$OIDC_GLEWLWYD_MTLS_CLIENT_CERT_FILE key=$OIDC_GLEWLWYD_MTLS_CLIENT_KEY_FILE
    local alias status token x5t pair verifier challenge url redirect code
    alias=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["mtls_endpoint_aliases"]["token_endpoint"])' "$tmp/discovery.json") ||
        { note "no mtls_endpoint_aliases.token_endpoint"; return 1; }
    status=$(req POST "$alias" --cert "$cert" --key "$key" -d grant_type=client_credentials -d "client_id=$id" -d "scope=$OIDC_GLEWLWYD_SCOPE")
    note "client credentials at $alias with the certificate: HTTP $status"
    [ "$status" = 200 ] || { note "$(body)"; return 1; }
    token=$(jget "$tmp/body" access_token)
    x5t=$(openssl x509 -in "$cert" -outform DER | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '=')
    note "cnf: $(claims "$token" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("cnf"))') (certificate thumbprint: $x5t)"
    claims "$token" | grep -q "\"x5t#S256\": \"$x5t\"" || return 1
    status=$(req POST "$alias" -d grant_type=client_credentials -d "client_id=$id" -d "scope=$OIDC_GLEWLWYD_SCOPE")
    note "same request without a certificate: HTTP $status"
    [ "$status" != 200 ] || return 1
    status=$(req POST "$token_endpoint" --cert "$cert" --key "$key" -d grant_type=client_credentials -d "client_id=$id" -d "scope=$OIDC_GLEWLWYD_SCOPE")
    note "with the certificate at the plain token endpoint $token_endpoint: HTTP $status"
    status=$(req POST "${alias%/token}/introspect" --cert "$cert" --key "$key" -d "client_id=$id" -d "token=$token")
    note "introspection at the mtls alias: HTTP $status active=$(jget "$tmp/body" active) cnf=$(jget "$tmp/body" cnf)"
    pair=$(pkce_pair)
    verifier=${pair% *}
    challenge=${pair#* }
    url="$iss/auth?response_type=code&client_id=$id&redirect_uri=$(urlencode "$OIDC_GLEWLWYD_REDIRECT_URI")&scope=openid&state=m1&nonce=m2&code_challenge=$challenge&code_challenge_method=S256"
    redirect=$($agent authorize "$url") || { note "agent: $redirect"; return 1; }
    status=$(req POST "$alias" --cert "$cert" --key "$key" -d grant_type=authorization_code -d "client_id=$id" \
        --data-urlencode "redirect_uri=$OIDC_GLEWLWYD_REDIRECT_URI" -d "code=$(query_param "$redirect" code)" -d "code_verifier=$verifier")
    note "code exchange at the mtls alias: HTTP $status"
    [ "$status" = 200 ] || return 1
    token=$(jget "$tmp/body" access_token)
    status=$(req GET "$iss/userinfo" --cert "$cert" --key "$key" -H "Authorization: Bearer $token")
    note "userinfo with the certificate-bound token, with the certificate: HTTP $status"
    status=$(req GET "$iss/userinfo" -H "Authorization: Bearer $token")
    note "userinfo with the certificate-bound token, without the certificate: HTTP $status"
}
if [ -n "${OIDC_GLEWLWYD_MTLS_CLIENT_ID:-}" ]; then
    run_step step_mtls "mTLS (RFC 8705): tls_client_auth at the mtls_endpoint_aliases, certificate-bound tokens (cnf.x5t#S256)"
else
    info "mTLS (RFC 8705): not run; the provider runs plain HTTP (run scripts/glewlwyd-smoke.sh --tls)"
fi

# --- 11. what glewlwyd 2.7.5 does not do ---
status=$(req POST "$token_endpoint" -u "$conf_id:$conf_secret" -d grant_type=urn:ietf:params:oauth:grant-type:token-exchange \
    -d subject_token=x -d subject_token_type=urn:ietf:params:oauth:token-type:access_token)
info "token exchange (RFC 8693): not in glewlwyd 2.7.5 (grant_types_supported: $(jget "$tmp/discovery.json" grant_types_supported)); POST grant_type=...token-exchange: HTTP $status body='$(body)'"

echo "glewlwyd smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
