#!/usr/bin/env python3
"""An independent DPoP client (requests-oauth2client, PyPI) calling a protected API twice.

    dpop-client.py URL --key-file PEM [--alg ES256]  < access-token

Reads a DPoP-bound access token on standard input (never as an argument: `ps` shows those) and the
private key it is bound to (`cnf.jkt`) from a PEM file, then sends GET URL twice with
requests-oauth2client's `DPoPToken` as the `requests` auth: each request gets a fresh proof made by
jwskate (`htm`, `htu`, `iat`, `jti`, `ath`), and a `401` whose `WWW-Authenticate` is a `DPoP`
challenge with a `DPoP-Nonce` (RFC 9449 §9, `use_dpop_nonce`) is answered once more with a proof
carrying that nonce, which the client keeps for the next request. Run with the virtualenv that
scripts/dpop-client.sh installs.

Prints one JSON object on stdout: for each request its final `status` and `body` (JSON, or null),
`nonce_challenges` (how many nonces the server handed the client), `nonce` (whether the client holds
one at the end) and `jkt` (the key's RFC 7638 thumbprint). Exit 0 when both requests were answered,
1 on a client error (a missing or repeated `DPoP-Nonce` raises in requests-oauth2client), 2 on usage.
"""

import argparse
import json
import sys

import jwskate
import requests
from requests_oauth2client import DPoPKey, DPoPToken


class CountingKey(DPoPKey):
    """requests-oauth2client's key, counting the nonce challenges it takes (and nothing else)."""

    challenges: list = []

    def handle_rs_provided_dpop_nonce(self, response: requests.Response) -> None:
        CountingKey.challenges.append(response.status_code)
        super().handle_rs_provided_dpop_nonce(response)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--alg", default="ES256", help="the proofs' algorithm, for the key's type (default ES256)")
    parser.add_argument("--timeout", type=float, default=10)
    arguments = parser.parse_args()

    token_text = sys.stdin.read(1 << 20).strip()
    if not token_text:
        print("dpop-client: no access token on standard input", file=sys.stderr)
        return 2
    with open(arguments.key_file, "rb") as handle:
        key = CountingKey(private_key=jwskate.Jwk.from_pem(handle.read()), alg=arguments.alg)
    token = DPoPToken(token_text, _dpop_key=key)

    results = []
    with requests.Session() as session:
        for _ in range(2):
            response = session.get(arguments.url, auth=token, timeout=arguments.timeout)
            try:
                body = response.json()
            except ValueError:
                body = None
            results.append({"status": response.status_code, "body": body, "www_authenticate": response.headers.get("WWW-Authenticate")})
    print(json.dumps({
        "requests": results,
        "nonce_challenges": len(CountingKey.challenges),
        "nonce": key.rs_nonce is not None,
        "jkt": key.dpop_jkt,
    }, sort_keys=True))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as error:  # requests-oauth2client's MissingDPoPNonce, RepeatedDPoPNonce, network errors
        print(f"dpop-client: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
