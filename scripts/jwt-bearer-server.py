#!/usr/bin/env python3
"""An independent authorization server for the JWT bearer grant (RFC 7523 §2.1): Authlib's
JWTBearerGrant (Authlib, Flask and joserfc from PyPI, pinned in Tests/Interop/requirements.txt)
behind a Flask app, on 127.0.0.1. The tests of `oidc login --flow jwt-bearer` run against it
(Tests/OIDCCLITests/AuthlibJWTBearerTests.swift).

    jwt-bearer-server.py --jwks-file FILE --assertion-issuer ISS [--port 0] [--token-ttl S]

What decides the answers is Authlib's: the assertion's signature (by a key of FILE, a JWK Set),
its `iss` (the one client it names), `aud` (this server's issuer or token endpoint), `exp` (with
Authlib's 60 s leeway) and the grant type the client may use; a refusal is Authlib's
`invalid_grant` / `unauthorized_client`. This script only supplies the models Authlib asks for:
the client of ISS (which may use this grant only), any `sub` as a user, tokens in memory.

Routes:
  /.well-known/openid-configuration, /.well-known/oauth-authorization-server   the metadata
  POST /token                                                                   Authlib's token endpoint
  GET /resource                                                                 Authlib's bearer check; {"sub", "scope"}
  /.well-known/oauth-protected-resource[/resource]                              RFC 9728 metadata of /resource (this
                                                                                server its authorization server), so
                                                                                that `oidc login --resource` finds it
  GET /testing/log                                                              what each token request asked
                                                                                (grant_type, scope, resource, the
                                                                                assertion's sub; never the assertion)

It prints its issuer (http://127.0.0.1:PORT) on stdout's first line once it listens, and serves
until killed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from authlib.integrations.flask_oauth2 import AuthorizationServer, ResourceProtector, current_token
from authlib.oauth2.rfc6750 import BearerTokenValidator
from authlib.oauth2.rfc7523 import JWTBearerGrant
from flask import Flask, jsonify, request
from joserfc.jwk import KeySet
from werkzeug.serving import make_server

GRANT = JWTBearerGrant.GRANT_TYPE


class Client:
    """The one client: the holder of the assertion issuer's JWTs, allowed this grant only."""

    def __init__(self, issuer: str):
        self.client_id = "workload"
        self.issuer = issuer

    def get_client_id(self):
        return self.client_id

    def get_allowed_scope(self, scope):
        return scope or ""

    def check_grant_type(self, grant_type):
        return grant_type == GRANT

    def check_endpoint_auth_method(self, method, endpoint):
        return True

    def check_client_secret(self, client_secret):
        return False

    def get_default_redirect_uri(self):
        return None

    def check_redirect_uri(self, redirect_uri):
        return False

    def check_response_type(self, response_type):
        return False


class User:
    def __init__(self, subject: str):
        self.subject = subject

    def get_user_id(self):
        return self.subject


class Token:
    def __init__(self, values: dict, user: User | None, issued: float):
        self.values = values
        self.user = user
        self.issued = issued

    def check_client(self, client):
        return True

    def get_scope(self):
        return self.values.get("scope", "")

    def get_expires_in(self):
        return self.values["expires_in"]

    def is_expired(self):
        return time.time() >= self.issued + self.values["expires_in"]

    def is_revoked(self):
        return False

    def get_user(self):
        return self.user


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jwks-file", required=True, help="the assertion issuer's public keys (a JWK Set)")
    parser.add_argument("--assertion-issuer", required=True, help="the iss of the assertions")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token-ttl", type=int, default=3600, help="the access tokens' lifetime in seconds")
    options = parser.parse_args()
    with open(options.jwks_file, encoding="utf-8") as handle:
        keys = KeySet.import_key_set(json.load(handle))

    app = Flask("jwt-bearer-server")
    server = make_server("127.0.0.1", options.port, app, threaded=True)
    issuer = f"http://127.0.0.1:{server.server_port}"
    client = Client(options.assertion_issuer)
    tokens: dict[str, Token] = {}
    log: list[dict] = []

    def save_token(token, oauth_request):
        tokens[token["access_token"]] = Token(dict(token), oauth_request.user, time.time())

    authorization = AuthorizationServer(app, query_client=lambda client_id: client if client_id == client.client_id else None, save_token=save_token)
    app.config["OAUTH2_TOKEN_EXPIRES_IN"] = {GRANT: options.token_ttl}

    class WorkloadGrant(JWTBearerGrant):
        def resolve_issuer_client(self, assertion_issuer):
            return client if assertion_issuer == client.issuer else None

        def resolve_client_public_key(self, resolved):
            return keys

        def authenticate_user(self, subject):
            return User(subject)

        def has_granted_permission(self, resolved, user):
            return True

        def get_audiences(self):
            return [issuer, issuer + "/token"]

    authorization.register_grant(WorkloadGrant)

    class Validator(BearerTokenValidator):
        def authenticate_token(self, token_string):
            return tokens.get(token_string)

    protect = ResourceProtector()
    protect.register_token_validator(Validator())

    @app.get("/.well-known/openid-configuration")
    @app.get("/.well-known/oauth-authorization-server")
    def metadata():
        return jsonify(
            issuer=issuer,
            authorization_endpoint=issuer + "/authorize",
            token_endpoint=issuer + "/token",
            jwks_uri=issuer + "/jwks",
            response_types_supported=["code"],
            subject_types_supported=["public"],
            id_token_signing_alg_values_supported=["RS256"],
            grant_types_supported=[GRANT],
            token_endpoint_auth_methods_supported=["none"],
            scopes_supported=["reports"],
        )

    @app.get("/jwks")
    def jwks():
        return jsonify(keys=[])

    @app.post("/token")
    def token():
        entry = {name: request.form.get(name) for name in ("grant_type", "scope", "resource", "client_id")}
        try:
            parts = request.form.get("assertion", "").split(".")
            claims = json.loads(_segment(parts[1]))
            entry["assertion_sub"] = claims.get("sub")
            entry["assertion_iss"] = claims.get("iss")
            entry["assertion_typ"] = json.loads(_segment(parts[0])).get("typ")
        except Exception:  # noqa: BLE001 (a malformed assertion: Authlib refuses it below)
            entry["assertion_sub"] = None
        response = authorization.create_token_response()
        entry["status"] = response.status_code
        log.append(entry)
        return response

    @app.get("/resource")
    @protect()
    def resource():
        return jsonify(sub=current_token.user.subject if current_token.user else None, scope=current_token.get_scope())

    @app.get("/.well-known/oauth-protected-resource")
    @app.get("/.well-known/oauth-protected-resource/resource")
    def resource_metadata():
        return jsonify(resource=issuer + "/resource", authorization_servers=[issuer], bearer_methods_supported=["header"],
                       scopes_supported=["reports"])

    @app.get("/testing/log")
    def testing_log():
        return jsonify(log)

    print(issuer, flush=True)
    server.serve_forever()
    return 0


def _segment(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


if __name__ == "__main__":
    sys.exit(main())
