#!/usr/bin/env python3
"""JOSE helpers for the glewlwyd interop scripts: python3's standard library and the openssl CLI.

No pip package: signing goes through `openssl dgst` (RSA PKCS#1 v1.5, ECDSA P-256/P-384) or
python's hmac (HS256), and public keys are read from `openssl pkey -pubout` DER. See docs/glewlwyd.md.

    glewlwyd-jose.py jwks       --key PEM [--kid KID] [--alg ALG]
        The public JWKS ({"keys": [JWK]}) of a private key PEM (RSA or EC P-256/P-384/P-521).
    glewlwyd-jose.py thumbprint --key PEM
        Its RFC 7638 SHA-256 thumbprint (base64url), what a DPoP-bound token's cnf.jkt holds.
    glewlwyd-jose.py assertion  --client-id ID --aud URL (--key PEM | --secret-file FILE)
                                [--alg ALG] [--kid KID] [--lifetime SECONDS]
        An RFC 7523 client_assertion: iss = sub = client id, aud, jti, iat, exp (and nbf).
        --key: private_key_jwt (default alg RS256 for RSA keys, ES256 for EC P-256 keys);
        --secret-file: client_secret_jwt (HS256 with the file's first line as the secret).
    glewlwyd-jose.py dpop       --key PEM --htm METHOD --htu URL [--nonce NONCE]
                                [--access-token TOKEN] [--alg ALG] [--iat EPOCH]
        An RFC 9449 DPoP proof (typ dpop+jwt, the public jwk in the header, jti, htm, htu, iat,
        nonce when given, ath = SHA-256 of the access token when given).
    glewlwyd-jose.py decode     JWT
        The header and payload of a compact JWS as JSON (no verification).

Everything is printed on stdout; errors go to stderr with exit status 1.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
import uuid

EC_CURVES = {  # OID of namedCurve -> (crv, coordinate size, default alg, hash)
    "1.2.840.10045.3.1.7": ("P-256", 32, "ES256", "sha256"),
    "1.3.132.0.34": ("P-384", 48, "ES384", "sha384"),
    "1.3.132.0.35": ("P-521", 66, "ES512", "sha512"),
}
HASHES = {"256": "sha256", "384": "sha384", "512": "sha512"}


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64u_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def die(message: str) -> None:
    print(f"glewlwyd-jose: {message}", file=sys.stderr)
    sys.exit(1)


# --- minimal DER reader, enough for SubjectPublicKeyInfo and ECDSA-Sig-Value ---

def der_read(data: bytes, pos: int):
    """(tag, content, next position) of the DER element at pos."""
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    return tag, data[pos:pos + length], pos + length


def der_children(content: bytes):
    pos, items = 0, []
    while pos < len(content):
        tag, value, pos = der_read(content, pos)
        items.append((tag, value))
    return items


def oid_text(value: bytes) -> str:
    parts = [value[0] // 40, value[0] % 40]
    number = 0
    for byte in value[1:]:
        number = (number << 7) | (byte & 0x7F)
        if not byte & 0x80:
            parts.append(number)
            number = 0
    return ".".join(str(p) for p in parts)


def openssl(args, data=None) -> bytes:
    try:
        done = subprocess.run(["openssl", *args], input=data, capture_output=True, timeout=20, check=False)
    except FileNotFoundError:
        die("openssl not found (Debian: apt-get install openssl)")
    if done.returncode != 0:
        die(f"openssl {' '.join(args)} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


class Key:
    """A private key PEM file: its public JWK and how to sign with it."""

    def __init__(self, path: str):
        if not os.path.isfile(path):
            die(f"no key file {path}")
        self.path = path
        spki = openssl(["pkey", "-in", path, "-pubout", "-outform", "DER"])
        _, body, _ = der_read(spki, 0)
        (_, algorithm), (_, bits) = der_children(body)[:2]
        algorithm_items = der_children(algorithm)
        key_oid = oid_text(algorithm_items[0][1])
        point = bits[1:]  # BIT STRING: first byte is the count of unused bits (0)
        if key_oid == "1.2.840.113549.1.1.1":  # rsaEncryption
            _, rsa, _ = der_read(point, 0)
            (_, n), (_, e) = der_children(rsa)
            self.kty = "RSA"
            self.jwk = {"kty": "RSA", "n": b64u(n.lstrip(b"\0")), "e": b64u(e.lstrip(b"\0"))}
            self.default_alg = "RS256"
        elif key_oid == "1.2.840.10045.2.1":  # id-ecPublicKey
            curve = oid_text(algorithm_items[1][1])
            if curve not in EC_CURVES:
                die(f"unsupported EC curve {curve}")
            crv, size, alg, _ = EC_CURVES[curve]
            if point[0] != 4:
                die("compressed EC points are not supported")
            self.kty = "EC"
            self.size = size
            self.jwk = {"kty": "EC", "crv": crv, "x": b64u(point[1:1 + size]), "y": b64u(point[1 + size:])}
            self.default_alg = alg
        else:
            die(f"unsupported key type {key_oid}")

    def thumbprint(self) -> str:
        members = ("e", "kty", "n") if self.kty == "RSA" else ("crv", "kty", "x", "y")
        canonical = json.dumps({m: self.jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
        return b64u(hashlib.sha256(canonical.encode()).digest())

    def sign(self, alg: str, data: bytes) -> bytes:
        digest = HASHES.get(alg[2:])
        if digest is None or (self.kty == "RSA") != alg.startswith("RS") or (self.kty == "EC") != alg.startswith("ES"):
            die(f"alg {alg} does not fit this {self.kty} key (RS256/RS384/RS512 for RSA, ES256/ES384/ES512 for EC)")
        signature = openssl(["dgst", f"-{digest}", "-sign", self.path], data)
        if self.kty == "RSA":
            return signature
        _, body, _ = der_read(signature, 0)  # ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }
        (_, r), (_, s) = der_children(body)
        return r.lstrip(b"\0").rjust(self.size, b"\0") + s.lstrip(b"\0").rjust(self.size, b"\0")


def compact(header: dict, payload: dict, signer) -> str:
    signing_input = b64u(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        b64u(json.dumps(payload, separators=(",", ":")).encode())
    return signing_input + "." + b64u(signer(signing_input.encode()))


def cmd_jwks(args) -> None:
    key = Key(args.key)
    jwk = dict(key.jwk, use="sig", alg=args.alg or key.default_alg)
    if args.kid:
        jwk["kid"] = args.kid
    print(json.dumps({"keys": [jwk]}))


def cmd_thumbprint(args) -> None:
    print(Key(args.key).thumbprint())


def cmd_assertion(args) -> None:
    now = int(time.time())
    payload = {"iss": args.client_id, "sub": args.client_id, "aud": args.aud, "jti": str(uuid.uuid4()),
               "iat": now, "nbf": now, "exp": now + args.lifetime}
    if args.secret_file:
        with open(args.secret_file, encoding="utf-8") as handle:
            secret = handle.readline().strip().encode()
        alg = args.alg or "HS256"
        digest = HASHES.get(alg[2:]) if alg.startswith("HS") else None
        if digest is None:
            die(f"alg {alg}: client_secret_jwt takes HS256, HS384 or HS512")
        header = {"alg": alg, "typ": "JWT"}
        print(compact(header, payload, lambda data: hmac.new(secret, data, digest).digest()))
        return
    key = Key(args.key)
    alg = args.alg or key.default_alg
    header = {"alg": alg, "typ": "JWT"}
    if args.kid:
        header["kid"] = args.kid
    print(compact(header, payload, lambda data: key.sign(alg, data)))


def cmd_dpop(args) -> None:
    key = Key(args.key)
    alg = args.alg or key.default_alg
    header = {"typ": "dpop+jwt", "alg": alg, "jwk": key.jwk}
    payload = {"jti": str(uuid.uuid4()), "htm": args.htm.upper(), "htu": args.htu,
               "iat": args.iat if args.iat is not None else int(time.time())}
    if args.nonce:
        payload["nonce"] = args.nonce
    if args.access_token:
        payload["ath"] = b64u(hashlib.sha256(args.access_token.encode()).digest())
    print(compact(header, payload, lambda data: key.sign(alg, data)))


def cmd_decode(args) -> None:
    parts = args.jwt.strip().split(".")
    if len(parts) != 3:
        die("not a compact JWS (three dot-separated parts)")
    print(json.dumps({"header": json.loads(b64u_decode(parts[0])), "payload": json.loads(b64u_decode(parts[1]))}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    jwks = commands.add_parser("jwks")
    jwks.add_argument("--key", required=True)
    jwks.add_argument("--kid")
    jwks.add_argument("--alg")
    jwks.set_defaults(run=cmd_jwks)
    thumbprint = commands.add_parser("thumbprint")
    thumbprint.add_argument("--key", required=True)
    thumbprint.set_defaults(run=cmd_thumbprint)
    assertion = commands.add_parser("assertion")
    assertion.add_argument("--client-id", required=True)
    assertion.add_argument("--aud", required=True)
    source = assertion.add_mutually_exclusive_group(required=True)
    source.add_argument("--key")
    source.add_argument("--secret-file")
    assertion.add_argument("--alg")
    assertion.add_argument("--kid")
    assertion.add_argument("--lifetime", type=int, default=60)
    assertion.set_defaults(run=cmd_assertion)
    dpop = commands.add_parser("dpop")
    dpop.add_argument("--key", required=True)
    dpop.add_argument("--htm", required=True)
    dpop.add_argument("--htu", required=True)
    dpop.add_argument("--nonce")
    dpop.add_argument("--access-token")
    dpop.add_argument("--alg")
    dpop.add_argument("--iat", type=int)
    dpop.set_defaults(run=cmd_dpop)
    decode = commands.add_parser("decode")
    decode.add_argument("jwt")
    decode.set_defaults(run=cmd_decode)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
