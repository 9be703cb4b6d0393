#!/usr/bin/env bash
# libFuzzer over the library's untrusted inputs (tokens, JWKS, strict JSON, base64url, callback URLs,
# device authorization, introspection and pushed authorization request answers, private keys),
# bounded in time: scripts/fuzz.sh [SECONDS] (default 60). Builds the OIDC sources with the harness in
# Fuzz/ using `swiftc -sanitize=fuzzer,address`; the corpus and any crash land in fuzz-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
mkdir -p fuzz-out/corpus
# The library's sources without the SwiftNIO parts (the loopback listener and the HTTP transport's
# connection code), which the fuzzed parsers do not use and swiftc could not import here.
# Left out too: the RelyingParty facade (its defaults name the NIO transport) and any other file that
# names the transport or the listener in code.
sources=$(find Sources/OIDC -name '*.swift' -not -path '*/Loopback/*' -not -path '*/RelyingParty/*' | sort | while read -r file; do
    grep -q '^internal import NIO\|^import NIO\|^public import NIO\|^[^/]*\(NIOHTTPTransport\|LoopbackRedirectListener\)' "$file" || echo "$file"
done)
# swift-log, which the library logs through: its checkout (swift package resolve), built as a static
# library with its module beside it.
[ -d .build/checkouts/swift-log/Sources/Logging ] || swift package resolve >/dev/null
mkdir -p fuzz-out/modules
# shellcheck disable=SC2046 # one source path per word
swiftc -O -parse-as-library -module-name Logging -package-name swift_log -emit-module -emit-module-path fuzz-out/modules/Logging.swiftmodule \
    -emit-library -static -o fuzz-out/libLogging.a $(find .build/checkouts/swift-log/Sources/Logging -name '*.swift' | sort)
# shellcheck disable=SC2086 # one source path per word
swiftc -O -g -sanitize=fuzzer,address -parse-as-library -module-name OIDCFuzz -package-name swift_oidc \
    -I Sources/COpenSSL -I fuzz-out/modules $sources Fuzz/VerifierFuzzer.swift \
    -L fuzz-out -lLogging \
    -Xlinker -lcrypto -enable-upcoming-feature MemberImportVisibility -enable-upcoming-feature InternalImportsByDefault -o fuzz-out/verifier-fuzzer
# Seeds: tokens, JWKS documents, JSON, a callback URL.
printf '\000%s' 'eyJhbGciOiJFUzI1NiIsImtpZCI6ImUifQ.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwic3ViIjoiMSIsImF1ZCI6ImMiLCJleHAiOjE5MDAwMDAwMDAsImlhdCI6MTcwMDAwMDAwMH0.AAAA' > fuzz-out/corpus/token
# RFC 9864's Ed25519 and the polymorphic EdDSA, signed with RFC 8037's example key (the harness's key "o"):
# both verify, so mutations start from a token that reaches every check.
printf '\000%s' 'eyJhbGciOiJFZDI1NTE5Iiwia2lkIjoibyJ9.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwic3ViIjoiMSIsImF1ZCI6ImMiLCJleHAiOjE5MDAwMDAwMDAsImlhdCI6MTcwMDAwMDAwMH0.jHoWnI_dIWLhXzNJ8lMhBt4YTK-GxFAFeXRpEK_8xZpznGu7gjz_SccWHhiYKnAe2_JCKp2VZZKKN474olXZDg' > fuzz-out/corpus/token-ed25519
printf '\000%s' 'eyJhbGciOiJFZERTQSIsImtpZCI6Im8ifQ.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwic3ViIjoiMSIsImF1ZCI6ImMiLCJleHAiOjE5MDAwMDAwMDAsImlhdCI6MTcwMDAwMDAwMH0.vxHEf8XJOJYxwT9pY89HJeig4DDdIO4iugSZSgcsDIW3GzhZV2avnxHRG_GRs9VG5PTHwrddQgb5LwtJjMd_AA' > fuzz-out/corpus/token-eddsa
printf '\001%s' '{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"},{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}]}' > fuzz-out/corpus/jwks
printf '\001%s' '{"keys":[{"kty":"OKP","crv":"Ed25519","alg":"Ed25519","kid":"o","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}' > fuzz-out/corpus/jwks-okp
printf '\002%s' '{"a":[1,2.5e3,"\u00e4",{"b":null}],"c":true}' > fuzz-out/corpus/json
printf '\003%s' 'com.example.app:/callback?code=x&state=s&iss=https%3A%2F%2Fidp.example' > fuzz-out/corpus/callback
printf '\004%s' '{"device_code":"d","user_code":"WDJB-MJHT","verification_uri":"https://idp.example/device","verification_uri_complete":"https://idp.example/device?user_code=WDJB-MJHT","expires_in":"1800","interval":5}' > fuzz-out/corpus/device
printf '\004%s' '{"active":true,"scope":"a b","client_id":"c","exp":1900000000,"aud":["x","y"],"sub":"1"}' > fuzz-out/corpus/introspection
printf '\004%s' '{"request_uri":"urn:ietf:params:oauth:request_uri:6esc_11ACC5bwc014ltc14eY22c","expires_in":60}' > fuzz-out/corpus/pushed-authorization
printf '\005%s' '{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}' > fuzz-out/corpus/jwk-private
{ printf '\005'; cat Tests/OIDCTests/Fixtures/keys/ec-p256-sec1.pem; } > fuzz-out/corpus/pem
exec fuzz-out/verifier-fuzzer -max_total_time="$seconds" -max_len=8192 -timeout=5 -print_final_stats=1 fuzz-out/corpus
