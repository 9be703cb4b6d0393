#!/usr/bin/env python3
"""Provisions a freshly initialised glewlwyd 2.7.5 through its admin REST API; run by scripts/glewlwyd.sh.

    glewlwyd-provision.py --api http://127.0.0.1:PORT/api --state DIR [--tls-dir DIR/tls]

Python's standard library and the openssl CLI only. Logs in as `admin` with the password of Debian's
database script (`password`, on a database just made by glewlwyd.sh), then:
  - adds the client properties dpop_bound_access_tokens, tls_client_auth_subject_dn,
    backchannel_logout_uri and backchannel_logout_session_required to the database client
    backend's data format (it drops properties it does not list);
  - creates the scope `api.read` and the user `alice` (password scheme) with openid and api.read;
  - creates the clients (see CLIENTS below) with their secrets and keys from DIR/secrets;
  - creates six OIDC plugin instances (see PLUGINS below), each its own issuer (oidc-logout
    with OP sessions and back-channel logout; oidc-dcr with open dynamic registration and resource
    indicators for one resource, http://127.0.0.1:PORT on a port free now or $GLEWLWYD_RESOURCE_PORT,
    exported as OIDC_GLEWLWYD_DCR_RESOURCE_URL and _PORT; oidc-ciba with CIBA poll/ping/push and
    RFC 9396 authorization_details types, for the clients swift-ciba-poll, swift-ciba-ping, swift-rar);
  - with --tls-dir (glewlwyd serving HTTPS with the test CA of that directory): mTLS on every
    issuer (certificate from the TLS session, endpoint aliases .../mtls/...) and the client
    swift-mtls (tls_client_auth, subject CN=swift-mtls, certificate made by glewlwyd.sh);
  - changes the admin password to a random one (DIR/secrets/admin-password);
  - writes DIR/env.sh (shell export lines, also printed on stdout) and DIR/env.json.
Secrets (one line, no newline) and private keys are made once (0600 files under DIR/secrets, 0700)
and reused by later starts. Nothing secret is printed: only paths. See docs/glewlwyd.md.
"""
import argparse
import http.cookiejar
import json
import os
import secrets
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REDIRECT_URI = "http://127.0.0.1/callback"
CUSTOM_SCOPE = "api.read"
USERNAME = "alice"
DEBIAN_ADMIN_PASSWORD = "password"  # what Debian's init SQL gives `admin`; replaced at the end
MTLS_SUBJECT_DN = "CN=swift-mtls"  # glewlwyd compares the RFC 4514 string of the certificate's subject
SSL_CONTEXT = None  # with --tls-dir: trusts the test CA

# client_id -> settings. `secret`: a client_secret file is made; `key`: a private key (and the public
# JWKS registered on the client).
CLIENTS = {
    "swift-public": dict(
        name="Public client (code + PKCE, device flow)", confidential=False,
        authorization_type=["code", "refresh_token", "device_authorization"],
        token_endpoint_auth_method=[], env="PUBLIC"),
    "swift-confidential": dict(
        name="Confidential client (client_secret_basic / client_secret_post)", confidential=True, secret=True,
        authorization_type=["code", "refresh_token", "client_credentials", "device_authorization"],
        token_endpoint_auth_method=["client_secret_basic", "client_secret_post"], env="CONFIDENTIAL"),
    "swift-private-key-jwt": dict(
        name="Confidential client (private_key_jwt, RSA)", confidential=True, key="rsa",
        authorization_type=["code", "refresh_token", "client_credentials", "device_authorization"],
        token_endpoint_auth_method=["private_key_jwt"], env="PRIVATE_KEY_JWT"),
    # Its JWKS names the key by its RFC 7638 thumbprint, the kid a client gives a key it was given
    # without one (JWSSigningKey): glewlwyd looks keys up by kid and refuses an assertion without one.
    "swift-thumbprint-kid": dict(
        name="Confidential client (private_key_jwt, EC, kid = the key's thumbprint)", confidential=True, key="ec",
        kid="thumbprint", authorization_type=["client_credentials"],
        token_endpoint_auth_method=["private_key_jwt"], env="THUMBPRINT_KID"),
    "swift-client-secret-jwt": dict(
        name="Confidential client (client_secret_jwt, HS256)", confidential=True, secret=True,
        authorization_type=["code", "refresh_token", "client_credentials", "device_authorization"],
        token_endpoint_auth_method=["client_secret_jwt"], env="CLIENT_SECRET_JWT"),
    "swift-dpop": dict(
        name="Confidential client whose tokens must be DPoP-bound", confidential=True, secret=True,
        authorization_type=["code", "refresh_token", "client_credentials", "device_authorization"],
        token_endpoint_auth_method=["client_secret_basic", "client_secret_post"],
        dpop_bound_access_tokens="true", env="DPOP"),
    "swift-par": dict(
        name="Confidential client for the PAR-only issuer", confidential=True, secret=True,
        authorization_type=["code", "refresh_token"],
        token_endpoint_auth_method=["client_secret_basic", "client_secret_post"], env="PAR"),
    # Back-channel logout (OIDC Back-Channel Logout 1.0): its backchannel_logout_uri is set by the
    # test that listens for the logout token (glewlwyd-agent.py backchannel-uri), since only that
    # test knows its port; until then it is an address nothing listens on.
    "swift-logout": dict(
        name="Confidential client receiving back-channel logout tokens", confidential=True, secret=True,
        authorization_type=["code", "refresh_token"],
        token_endpoint_auth_method=["client_secret_basic", "client_secret_post"],
        backchannel_logout_uri="http://127.0.0.1:9/backchannel-logout", backchannel_logout_session_required="true",
        env="LOGOUT"),
    # CIBA (OpenID CIBA Core 1.0) on the issuer oidc-ciba: glewlwyd's grant type name for it is the URN.
    # login_hint must be the JSON {"username": "alice"}; the user approves through
    # ISSUER/ciba_user_list and its connect_uri (glewlwyd-agent.py ciba).
    "swift-ciba-poll": dict(
        name="Confidential client, CIBA poll mode", confidential=True, secret=True,
        authorization_type=["urn:openid:params:grant-type:ciba", "refresh_token"],
        token_endpoint_auth_method=["client_secret_basic", "client_secret_post"],
        backchannel_token_delivery_mode="poll", env="CIBA_POLL"),
    # Its notification endpoint is set by the test that listens (glewlwyd-agent.py ciba-notification-uri);
    # until then an address nothing listens on. glewlwyd POSTs {"auth_req_id": ...} with
    # "Authorization: Bearer <client_notification_token>" there; plain http://127.0.0.1 is accepted.
    "swift-ciba-ping": dict(
        name="Confidential client, CIBA ping mode", confidential=True, secret=True,
        authorization_type=["urn:openid:params:grant-type:ciba", "refresh_token"],
        token_endpoint_auth_method=["client_secret_basic", "client_secret_post"],
        backchannel_token_delivery_mode="ping",
        backchannel_client_notification_endpoint="http://127.0.0.1:9/ciba-notification", env="CIBA_PING"),
    # RFC 9396 authorization_details (authorization endpoint and PAR only: glewlwyd 2.7.5 ignores it
    # at the token endpoint for client_credentials and at the CIBA endpoint).
    "swift-rar": dict(
        name="Confidential client with authorization_details types", confidential=True, secret=True,
        authorization_type=["code", "refresh_token", "client_credentials"],
        token_endpoint_auth_method=["client_secret_basic", "client_secret_post"],
        authorization_details_types=["payment_initiation", "account_information"], env="RAR"),
}

# Client properties the database client backend must keep (it drops what its data-format does not list).
CLIENT_PROPERTIES = ("dpop_bound_access_tokens", "tls_client_auth_subject_dn", "backchannel_logout_uri",
                     "backchannel_logout_session_required", "backchannel_token_delivery_mode",
                     "backchannel_client_notification_endpoint", "authorization_details_types")
# Of these, the ones the backend keeps as lists.
MULTIPLE_CLIENT_PROPERTIES = ("authorization_details_types",)

# plugin name (= issuer path under /api) -> overrides of BASE_PLUGIN_PARAMETERS, env variable prefix
PLUGINS = {
    "oidc": ({}, "OIDC_GLEWLWYD"),
    "oidc-par": ({"oauth-par-required": True}, "OIDC_GLEWLWYD_PAR"),
    "oidc-nononce": ({"oauth-dpop-nonce-mandatory": False}, "OIDC_GLEWLWYD_NONONCE"),
    # OP sessions (sid in ID tokens, end_session, DELETE .../session/:sid) and back-channel logout:
    # an issuer of its own, so that the authorization responses of the others stay as they were
    # (session management adds session_state to them).
    "oidc-logout": ({"session-management-allowed": True, "back-channel-logout-allowed": True}, "OIDC_GLEWLWYD_LOGOUT"),
    # Open dynamic registration (RFC 7591, no initial access token; RFC 7592 management) and resource
    # indicators (RFC 8707) for one resource, RESOURCE_URL (set in main): what `oidc login --resource`
    # needs when nothing is known but the resource's URL. See "Registration and resource indicators"
    # in docs/glewlwyd.md.
    "oidc-dcr": ({"register-client-allowed": True, "register-client-auth-scope": [],
                  "register-client-management-allowed": True, "resource-allowed": True}, "OIDC_GLEWLWYD_DCR"),
    # CIBA (poll, ping, push; backchannel_authentication_endpoint ISSUER/ciba) and RFC 9396 rich
    # authorization requests (authorization_details of the types of RAR_TYPES, plain in the URL or
    # by PAR: rar-allow-auth-unsigned). An issuer of its own: RAR adds authorization_details to the
    # authorization responses.
    "oidc-ciba": ({
        "oauth-ciba-allowed": True, "oauth-ciba-default-expiry": 600, "oauth-ciba-maximum-expiry": 1200,
        "oauth-ciba-mode-poll-allowed": True, "oauth-ciba-mode-ping-allowed": True,
        "oauth-ciba-mode-push-allowed": True, "oauth-ciba-allow-https-non-secure": False,
        "oauth-ciba-user-code-allowed": False, "oauth-ciba-user-code-property": "user-code",
        "oauth-ciba-email-allowed": False,
        "oauth-rar-allowed": True, "rar-allow-auth-unsigned": True, "rar-allow-auth-unencrypted": True,
        "rar-types-client-property": "authorization_details_types",
        "rar-types": {
            "payment_initiation": {"scopes": [CUSTOM_SCOPE], "description": "Payment initiation (swift-oidc tests)",
                                   "locations": ["https://bank.example/payments"], "actions": ["initiate", "status"],
                                   "datatypes": [], "enriched": [], "privileges": []},
            "account_information": {"scopes": ["openid", CUSTOM_SCOPE], "description": "Account information",
                                    "locations": [], "actions": [], "datatypes": [], "enriched": [], "privileges": []},
        }}, "OIDC_GLEWLWYD_CIBA"),
}

# The OIDC plugin's parameters: glewlwyd 2.7.5's admin app defaults (webapp/admin.js), then what the
# interop tests need switched on.
BASE_PLUGIN_PARAMETERS = {
    "jwt-type": "rsa", "jwt-key-size": "256",
    "jwks-uri": "", "jwks-private": "", "default-kid": "", "client-sign_kid-parameter": "",
    "jwks-public": "", "jwks-public-uri": "", "jwks-show": True, "jwks-x5c": [],
    "access-token-duration": 3600, "refresh-token-duration": 1209600, "code-duration": 600,
    "refresh-token-rolling": True, "refresh-token-one-use": "never",
    "client-refresh-token-one-use-parameter": "refresh-token-one-use",
    "allow-non-oidc": True,  # client_credentials and requests without openid
    "auth-type-code-enabled": True, "auth-type-code-revoke-replayed": False,
    "auth-type-token-enabled": False, "auth-type-id-token-enabled": True, "auth-type-none-enabled": False,
    "auth-type-password-enabled": False, "auth-type-client-enabled": True,
    "auth-type-device-enabled": True, "auth-type-refresh-enabled": True,
    "scope": [], "additional-parameters": [], "claims": [],
    "service-documentation": "https://github.com/babelouest/glewlwyd/tree/master/docs",
    "op-policy-uri": "", "op-tos-uri": "",
    "request-parameter-allow": True, "request-uri-allow-https-non-secure": False,
    "request-parameter-allow-encrypted": True, "request-parameter-ietf-strict": False,
    "subject-type": "public",
    "address-claim": {"type": "no", "formatted": "", "street_address": "", "locality": "", "region": "",
                      "postal_code": "", "country": "", "mandatory": False},
    "name-claim": "on-demand", "name-claim-scope": [], "email-claim": "on-demand", "email-claim-scope": [],
    "scope-claim": "no", "scope-claim-scope": [],
    "allowed-scope": ["openid", CUSTOM_SCOPE],
    "pkce-allowed": True, "pkce-method-plain-allowed": False, "pkce-required": False,
    "pkce-required-public-client": True, "pkce-scopes": [],
    "introspection-revocation-allowed": True, "introspection-revocation-auth-scope": [],
    "introspection-revocation-allow-target-client": True,
    "register-client-allowed": False, "register-client-auth-scope": [], "register-client-credentials-scope": [],
    "register-client-token-one-use": True, "register-client-management-allowed": False,
    "register-resource-specify-allowed": False, "register-resource-default": [], "register-default-properties": {},
    "session-management-allowed": False, "session-cookie-name": "GLEWLWYD2_OIDC_SID",
    "session-cookie-expiration": 2419200, "front-channel-logout-allowed": False, "back-channel-logout-allowed": False,
    "client-pubkey-parameter": "", "client-jwks-parameter": "jwks", "client-jwks_uri-parameter": "jwks_uri",
    "request-maximum-exp": 3600,
    "encrypt-out-token-allow": False, "client-enc-parameter": "enc", "client-alg-parameter": "alg",
    "client-alg_kid-parameter": "alg_kid", "client-encrypt_code-parameter": "encrypt_code",
    "client-encrypt_at-parameter": "encrypt_at", "client-encrypt_userinfo-parameter": "encrypt_userinfo",
    "client-encrypt_id_token-parameter": "encrypt_id_token",
    "client-encrypt_refresh_token-parameter": "encrypt_refresh_token",
    "client-encrypt_introspection-parameter": "encrypt_introspection",
    "device-authorization-expiration": 600, "device-authorization-interval": 2,
    "client-cert-header-name": "SSL_CLIENT_CERT", "client-cert-use-endpoint-aliases": False,
    "client-cert-self-signed-allowed": False,
    "oauth-dpop-allowed": True, "oauth-dpop-iat-duration": 60, "oauth-dpop-iat-gap-duration": 5,
    "oauth-dpop-dpop_bound_access_tokens-property": "dpop_bound_access_tokens",
    "oauth-dpop-nonce-mandatory": True, "oauth-dpop-nonce-counter": 10,
    "resource-allowed": False, "resource-scope": {}, "resource-client-property": "",
    "resource-scope-and-client-property": False,
    "oauth-rar-allowed": False, "rar-types-client-property": "authorization_details_types",
    "rar-allow-auth-unsigned": False, "rar-allow-auth-unencrypted": True, "rar-types": {},
    "oauth-par-allowed": True, "oauth-par-duration": 90, "oauth-par-required": False,
    "oauth-par-request_uri-prefix": "urn:ietf:params:oauth:request_uri:",
    "prompt-continue-client-property": "", "restrict-scope-client-property": "",
    "oauth-ciba-allowed": False,
    "oauth-fapi-check-all": False, "oauth-fapi-allow-jarm": True, "oauth-fapi-add-s_hash": False,
    "oauth-fapi-verify-nbf": False, "oauth-fapi-allow-restrict-alg": False, "oauth-fapi-restrict-alg": [],
    "oauth-fapi-allow-multiple-kid": False, "oauth-fapi-ciba-confidential-client": False,
    "oauth-fapi-ciba-push-forbidden": False,
    "oauth-as-iss-id": True,  # RFC 9207: iss in the authorization response
}


def die(message: str) -> None:
    print(f"glewlwyd-provision: {message}", file=sys.stderr)
    sys.exit(1)


class Admin:
    """A cookie session on glewlwyd's admin API."""

    def __init__(self, api: str):
        self.api = api.rstrip("/")
        self.opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=SSL_CONTEXT),
                                                  urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def call(self, method: str, path: str, body=None, ok=(200,)):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.api + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with self.opener.open(request, timeout=15) as response:
                status, text = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode(errors="replace")
        except OSError as error:
            die(f"{method} {path}: {error}")
        if status not in ok:
            die(f"{method} {path}: HTTP {status} {text[:500]}")
        return json.loads(text) if text.strip().startswith(("{", "[")) else text


def write_secret(path: str, make) -> None:
    if os.path.exists(path) and os.path.getsize(path) > 0:
        os.chmod(path, 0o600)  # a kept file too: JWSSigningKey(contentsOfFile:) refuses one others can read
        return
    old = os.umask(0o077)
    try:
        make(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)


def random_secret(path: str) -> None:
    write_secret(path, lambda p: open(p, "w", encoding="utf-8").write(secrets.token_urlsafe(32)))


def private_key(path: str, kind: str) -> None:
    args = {"rsa": ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
            "ec": ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]}[kind]
    write_secret(path, lambda p: subprocess.run(["openssl", "genpkey", *args, "-out", p], check=True,
                                                capture_output=True, timeout=60))


def read_first_line(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.readline().strip()


def jwks_of(key_path: str, kid: str) -> dict:
    done = subprocess.run([sys.executable, os.path.join(HERE, "glewlwyd-jose.py"), "jwks", "--key", key_path,
                           "--kid=" + kid], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        die(f"could not make the JWKS of {key_path}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def thumbprint_of(key_path: str) -> str:
    done = subprocess.run([sys.executable, os.path.join(HERE, "glewlwyd-jose.py"), "thumbprint", "--key", key_path],
                          capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        die(f"could not compute the thumbprint of {key_path}: {done.stderr.strip()}")
    return done.stdout.strip()


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", required=True, help="http://127.0.0.1:PORT/api")
    parser.add_argument("--state", required=True, help="the state directory (.build-glewlwyd)")
    parser.add_argument("--tls-dir", help="ca.crt and swift-mtls.crt of glewlwyd.sh --tls")
    args = parser.parse_args()
    global SSL_CONTEXT
    if args.tls_dir:
        SSL_CONTEXT = ssl.create_default_context(cafile=os.path.join(args.tls_dir, "ca.crt"))
        CLIENTS["swift-mtls"] = dict(
            name="Confidential client (tls_client_auth, RFC 8705)", confidential=True,
            authorization_type=["code", "refresh_token", "client_credentials", "device_authorization"],
            token_endpoint_auth_method=["tls_client_auth"], tls_client_auth_subject_dn=MTLS_SUBJECT_DN, env="MTLS")
    base = args.api.rstrip("/")
    origin = base[: -len("/api")] if base.endswith("/api") else base
    secret_dir = os.path.join(args.state, "secrets")
    os.makedirs(secret_dir, mode=0o700, exist_ok=True)
    os.chmod(secret_dir, 0o700)

    # Secrets and keys, made once and reused.
    paths = {"admin": os.path.join(secret_dir, "admin-password"),
             "user": os.path.join(secret_dir, "alice-password"),
             "signing": os.path.join(secret_dir, "server-signing-rsa.key"),
             "dpop": os.path.join(secret_dir, "dpop-ec.key")}
    random_secret(paths["admin"])
    random_secret(paths["user"])
    private_key(paths["signing"], "rsa")
    private_key(paths["dpop"], "ec")
    for client_id, spec in CLIENTS.items():
        if spec.get("secret"):
            spec["secret_file"] = os.path.join(secret_dir, f"{client_id}.secret")
            random_secret(spec["secret_file"])
        if spec.get("key"):
            spec["key_file"] = os.path.join(secret_dir, f"{client_id}.key")
            private_key(spec["key_file"], spec["key"])
            spec["kid"] = thumbprint_of(spec["key_file"]) if spec.get("kid") == "thumbprint" else f"{client_id}-1"
            spec["jwks"] = jwks_of(spec["key_file"], spec["kid"])
            spec["jwks_file"] = os.path.join(args.state, f"{client_id}.jwks.json")
            with open(spec["jwks_file"], "w", encoding="utf-8") as handle:
                json.dump(spec["jwks"], handle, indent=1)
    signing_public = subprocess.run(["openssl", "pkey", "-in", paths["signing"], "-pubout"], capture_output=True,
                                    text=True, check=True, timeout=30).stdout

    admin = Admin(base)
    admin.call("POST", "/auth/", {"username": "admin", "password": DEBIAN_ADMIN_PASSWORD})

    # The database client backend keeps only the properties of its data-format: add the one DPoP needs.
    module = admin.call("GET", "/mod/client/database")
    for prop in CLIENT_PROPERTIES:
        module["parameters"]["data-format"][prop] = {"multiple": prop in MULTIPLE_CLIENT_PROPERTIES, "read": True,
                                                     "write": True}
    admin.call("PUT", "/mod/client/database", {k: module[k] for k in ("module", "name", "display_name",
                                                                       "order_rank", "parameters", "readonly")
                                               if k in module})
    admin.call("PUT", "/mod/client/database/reset")

    admin.call("POST", "/scope/", {"name": CUSTOM_SCOPE, "display_name": "API read",
                                   "description": "Custom scope of the swift-oidc interop tests",
                                   "password_required": True, "password_max_age": 0, "scheme": {}})
    admin.call("POST", "/user/", {"username": USERNAME, "name": "Alice Interop", "email": "alice@example.test",
                                  "password": read_first_line(paths["user"]), "enabled": True,
                                  "scope": ["openid", CUSTOM_SCOPE]})

    for client_id, spec in CLIENTS.items():
        body = {"client_id": client_id, "name": spec["name"], "description": "swift-oidc interop tests",
                "enabled": True, "confidential": spec["confidential"], "redirect_uri": [REDIRECT_URI],
                "authorization_type": spec["authorization_type"],
                "scope": [CUSTOM_SCOPE] if "client_credentials" in spec["authorization_type"] else []}
        if spec["token_endpoint_auth_method"]:
            body["token_endpoint_auth_method"] = spec["token_endpoint_auth_method"]
        if spec.get("secret_file"):
            body["client_secret"] = read_first_line(spec["secret_file"])
        if spec.get("jwks"):
            body["jwks"] = spec["jwks"]  # an object: a JSON string is dropped silently
        for prop in CLIENT_PROPERTIES:
            if spec.get(prop):
                body[prop] = spec[prop]
        admin.call("POST", "/client/", body)

    # The resource of oidc-dcr: glewlwyd compares `resource` with its list exactly, so the URL, port
    # included, is fixed here, on a port free now (or $GLEWLWYD_RESOURCE_PORT), where the tests
    # start their protected resource (`oidc resource-server --port`).
    resource_port = int(os.environ.get("GLEWLWYD_RESOURCE_PORT") or free_port())
    resource_url = f"http://127.0.0.1:{resource_port}"
    PLUGINS["oidc-dcr"][0]["resource-scope"] = {CUSTOM_SCOPE: [resource_url]}

    for name, (overrides, _) in PLUGINS.items():
        parameters = dict(BASE_PLUGIN_PARAMETERS, iss=f"{base}/{name}", key=open(paths["signing"]).read(),
                          cert=signing_public)
        parameters["device-authorization-interval"] = int(os.environ.get("GLEWLWYD_DEVICE_INTERVAL", "2"))
        if args.tls_dir:
            parameters.update({"client-cert-source": "TLS", "client-cert-use-endpoint-aliases": True,
                               "client-cert-self-signed-allowed": False})
        parameters.update(overrides)
        # A POST refused with 400 can still leave the instance behind, stored but not loaded: check
        # the discovery document below rather than trusting the status alone.
        admin.call("POST", "/mod/plugin/", {"module": "oidc", "name": name, "display_name": f"OIDC {name}",
                                            "enabled": True, "parameters": parameters})
        discovery_url = f"{base}/{name}/.well-known/openid-configuration"
        deadline = time.monotonic() + 10
        while True:
            try:
                with urllib.request.urlopen(discovery_url, timeout=2, context=SSL_CONTEXT) as response:
                    if json.load(response).get("issuer") == parameters["iss"]:
                        break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                die(f"plugin {name} added but {discovery_url} does not answer with its issuer")
            time.sleep(0.1)

    admin.call("PUT", "/user/admin", {"password": read_first_line(paths["admin"])})

    env = {"OIDC_GLEWLWYD_API": base, "OIDC_GLEWLWYD_ORIGIN": origin}
    for name, (_, prefix) in PLUGINS.items():
        env[f"{prefix}_ISSUER"] = f"{base}/{name}"
    env.update({
        "OIDC_GLEWLWYD_REDIRECT_URI": REDIRECT_URI,
        "OIDC_GLEWLWYD_SCOPE": CUSTOM_SCOPE,
        "OIDC_GLEWLWYD_USERNAME": USERNAME,
        "OIDC_GLEWLWYD_PASSWORD_FILE": paths["user"],
        "OIDC_GLEWLWYD_ADMIN_PASSWORD_FILE": paths["admin"],
        "OIDC_GLEWLWYD_DPOP_KEY_FILE": paths["dpop"],
        "OIDC_GLEWLWYD_DCR_RESOURCE_URL": resource_url,
        "OIDC_GLEWLWYD_DCR_RESOURCE_PORT": str(resource_port),
    })
    if args.tls_dir:
        env["OIDC_GLEWLWYD_CA_FILE"] = os.path.join(args.tls_dir, "ca.crt")
    for client_id, spec in CLIENTS.items():
        prefix = f"OIDC_GLEWLWYD_{spec['env']}_CLIENT"
        env[f"{prefix}_ID"] = client_id
        if spec.get("secret_file"):
            env[f"{prefix}_SECRET_FILE"] = spec["secret_file"]
        if spec.get("key_file"):
            env[f"{prefix}_KEY_FILE"] = spec["key_file"]
            env[f"{prefix}_JWKS_FILE"] = spec["jwks_file"]
            env[f"{prefix}_KID"] = spec["kid"]
        if spec.get("tls_client_auth_subject_dn"):
            env[f"{prefix}_CERT_FILE"] = os.path.join(args.tls_dir, f"{client_id}.crt")
            env[f"{prefix}_KEY_FILE"] = os.path.join(secret_dir, f"tls-{client_id}.key")
            env[f"{prefix}_SUBJECT_DN"] = spec["tls_client_auth_subject_dn"]
    env["OIDC_GLEWLWYD_ENV_FILE"] = os.path.join(args.state, "env.json")
    with open(os.path.join(args.state, "env.json"), "w", encoding="utf-8") as handle:
        json.dump(env, handle, indent=1)
    lines = "".join(f"export {k}='{v}'\n" for k, v in env.items())
    with open(os.path.join(args.state, "env.sh"), "w", encoding="utf-8") as handle:
        handle.write(lines)
    sys.stdout.write(lines)


if __name__ == "__main__":
    main()
