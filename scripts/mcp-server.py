"""An MCP server protected as an OAuth resource, and its authorization server, on 127.0.0.1.

Built from the official MCP Python SDK (`mcp`, PyPI; the version in Tests/Interop/mcp-requirements.txt)
for swift-oidc's interop tests, on the model of the SDK's `simple-auth` example (an authorization server
and a resource server apart, the resource server checking tokens by introspection at the authorization
server). Run by scripts/mcp-server.sh, which documents the ports, the files and the variables.

The resource server (RS, the `--port`): the SDK's `MCPServer` over streamable HTTP at /mcp (JSON answers,
not SSE), with the SDK's RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp (one
authorization server; `scopes_supported` the base scope `mcp:tools` only, the minimum for its ordinary
tools, as the MCP authorization spec advises) and the SDK's bearer middleware: no valid token, a 401 whose
`WWW-Authenticate` names `resource_metadata`; a token whose audience (`resource`) is not
http://127.0.0.1:PORT/mcp is not valid. Its tools: `whoami`, `add` (both `mcp:tools`) and `admin_report`,
which also needs `mcp:admin`: calling it without answers HTTP 403 with
`WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata=...`
(RFC 6750 §3.1; the step-up of the MCP spec). The SDK checks only endpoint-wide scopes, so that per-tool
check is ScopedToolsMiddleware below.

The authorization server (AS, `--as-port`): the SDK's routes (RFC 8414 metadata, /authorize with PKCE
S256, /token, RFC 7591 /register, RFC 7009 /revoke) over LoopbackProvider below, plus RFC 7662
/introspect for the RS (authenticated with a secret that never leaves this process). The SDK matches
redirect URIs exactly, port included. What this AS adds to the SDK's checks:
- RFC 8707: `resource` is required, and must be the RS's URL byte for byte, on the authorization
  request, the code exchange and every refresh (`invalid_target` otherwise); the tokens' audience is it.
- Refresh tokens are issued to clients registered with the `refresh_token` grant and rotate (the old one
  is spent by its refresh).
- There is no login page: the AS approves every authorization request at once for its one loopback test
  user (`alice`) and redirects straight back to the client with the code, so a test's "browser" only has
  to follow the redirect. Nothing else is weakened: client, redirect URI, scope, PKCE and resource are
  checked as above.
- For the tests, under /testing/ and only with `Authorization: Bearer <control secret>` (the secret is in
  the file --control-secret-file, 0600): GET /testing/log (the registrations, the authorizations and the
  token requests seen, with client ids, grant types, scopes and `resource`, never a token or a secret) and
  POST /testing/expire-access-tokens (every access token issued so far stops being active, so a client's
  next call gets a 401 and refreshes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import hmac
import json
import logging
import secrets
import signal
import sys
import time
from collections import deque
from typing import Any
from urllib.parse import parse_qs

import httpx2
import uvicorn
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_resource_metadata_url, create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

BASE_SCOPE = "mcp:tools"
ADMIN_SCOPE = "mcp:admin"
USER = "alice"
# Tools that need more than the base scope: name -> every scope the call needs.
SCOPED_TOOLS = {"admin_report": [BASE_SCOPE, ADMIN_SCOPE]}
MAX_FORM_BYTES = 64 * 1024  # a token request's body, read by TokenRequestCapture
MAX_RPC_BYTES = 1024 * 1024  # an MCP request's body, read by ScopedToolsMiddleware
LOG_ENTRIES = 200  # kept per kind in /testing/log

logger = logging.getLogger("mcp-server")

# The form of the token request being handled, for the provider (the SDK's TokenHandler does not pass
# `resource` on to it).
token_form: contextvars.ContextVar[dict[str, list[str]] | None] = contextvars.ContextVar("token_form", default=None)


def _secret_matches(request: Request, secret: str) -> bool:
    given = request.headers.get("authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {secret}".encode())


class LoopbackProvider:
    """The SDK's OAuthAuthorizationServerProvider protocol, in memory, for one resource."""

    def __init__(self, issuer: str, resource: str, access_token_ttl: int):
        self.issuer = issuer
        self.resource = resource
        self.access_token_ttl = access_token_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.registrations: deque[dict[str, Any]] = deque(maxlen=LOG_ENTRIES)
        self.authorizations: deque[dict[str, Any]] = deque(maxlen=LOG_ENTRIES)
        self.token_requests: deque[dict[str, Any]] = deque(maxlen=LOG_ENTRIES)

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id
        self.clients[client_info.client_id] = client_info
        self.registrations.append(
            {
                "client_id": client_info.client_id,
                "client_name": client_info.client_name,
                "redirect_uris": [str(uri) for uri in client_info.redirect_uris or []],
                "grant_types": list(client_info.grant_types),
                "token_endpoint_auth_method": client_info.token_endpoint_auth_method,
                "application_type": getattr(client_info, "application_type", None),
                "scope": client_info.scope,
            }
        )
        logger.info("registered client %s, redirect URIs %s", client_info.client_id, client_info.redirect_uris)

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.authorizations.append(
            {
                "client_id": client.client_id,
                "scopes": params.scopes,
                "resource": params.resource,
                "redirect_uri": str(params.redirect_uri),
            }
        )
        if params.resource != self.resource:
            raise AuthorizeError("invalid_target", f"resource must be {self.resource} (RFC 8707)")
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [BASE_SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=USER,
        )
        logger.info("approved for %s: client %s, scopes %s", USER, client.client_id, params.scopes)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _requested_resource(self) -> str:
        """The token request's one `resource`, which must be this AS's resource."""
        resources = (token_form.get() or {}).get("resource", [])
        if resources != [self.resource]:
            raise TokenError("invalid_target", f"resource must be {self.resource} (RFC 8707)")
        return self.resource

    def _issue(self, client: OAuthClientInformationFull, scopes: list[str], resource: str, subject: str | None) -> OAuthToken:
        access = secrets.token_urlsafe(32)
        expires_at = int(time.time()) + self.access_token_ttl
        self.access_tokens[access] = AccessToken(
            token=access,
            client_id=client.client_id or "",
            scopes=scopes,
            expires_at=expires_at,
            resource=resource,
            subject=subject,
        )
        refresh = None
        if "refresh_token" in client.grant_types:
            refresh = secrets.token_urlsafe(32)
            self.refresh_tokens[refresh] = RefreshToken(
                token=refresh, client_id=client.client_id or "", scopes=scopes, resource=resource, subject=subject
            )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.access_token_ttl,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> OAuthToken:
        if self.codes.pop(code.code, None) is None:
            raise TokenError("invalid_grant", "authorization code already used")
        resource = self._requested_resource()
        if code.resource != resource:
            raise TokenError("invalid_target", "resource differs from the authorization request's")
        return self._issue(client, code.scopes, resource, code.subject)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        resource = self._requested_resource()
        if refresh_token.resource != resource:
            raise TokenError("invalid_target", "resource differs from the grant's")
        if self.refresh_tokens.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token already used")
        return self._issue(client, scopes, resource, refresh_token.subject)

    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access_tokens.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access_tokens.pop(token.token, None)
        self.refresh_tokens.pop(token.token, None)

    def expire_access_tokens(self) -> int:
        past = int(time.time()) - 1
        for access in self.access_tokens.values():
            access.expires_at = past
        return len(self.access_tokens)


class TokenRequestCapture:
    """Reads the /token request's form (at most MAX_FORM_BYTES) for the provider and the log, then
    hands the same body to the SDK's handler."""

    def __init__(self, app: ASGIApp, provider: LoopbackProvider):
        self.app = app
        self.provider = provider

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/token" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive, MAX_FORM_BYTES)
        if body is None:
            await JSONResponse({"error": "invalid_request", "error_description": "body too large"}, 413)(scope, receive, send)
            return
        form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        self.provider.token_requests.append(
            {
                "grant_type": (form.get("grant_type") or [None])[0],
                "client_id": (form.get("client_id") or [None])[0],
                "scope": (form.get("scope") or [None])[0],
                "resource": form.get("resource"),
            }
        )
        reset = token_form.set(form)
        try:
            await self.app(scope, _replay(body), send)
        finally:
            token_form.reset(reset)


class ScopedToolsMiddleware:
    """A `tools/call` of a tool in SCOPED_TOOLS by a token without all its scopes: 403
    `insufficient_scope` naming them (RFC 6750 §3.1). Runs after the SDK's authentication middleware
    (a request without a valid token goes on to its 401)."""

    def __init__(self, app: ASGIApp, metadata_url: str):
        self.app = app
        self.metadata_url = metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if scope["type"] != "http" or scope["method"] != "POST" or not isinstance(user, AuthenticatedUser):
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive, MAX_RPC_BYTES)
        if body is None:
            await JSONResponse({"error": "request too large"}, 413)(scope, receive, send)
            return
        needed = _scopes_needed(body)
        if needed and not set(needed) <= set(user.scopes):
            challenge = (
                f'Bearer error="insufficient_scope", scope="{" ".join(needed)}", '
                f'resource_metadata="{self.metadata_url}", error_description="the tool needs {" ".join(needed)}"'
            )
            await JSONResponse(
                {"error": "insufficient_scope", "error_description": f"the tool needs {' '.join(needed)}"},
                403,
                headers={"WWW-Authenticate": challenge},
            )(scope, receive, send)
            return
        await self.app(scope, _replay(body), send)


def _scopes_needed(body: bytes) -> list[str] | None:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested too deep: the SDK answers it
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return SCOPED_TOOLS.get(name) if isinstance(name, str) else None


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


class IntrospectionVerifier:
    """The SDK's TokenVerifier protocol: RFC 7662 introspection at the AS."""

    def __init__(self, endpoint: str, secret: str):
        self.endpoint = endpoint
        self.secret = secret
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(10.0, connect=5.0))

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            response = await self.client.post(
                self.endpoint, data={"token": token}, headers={"Authorization": f"Bearer {self.secret}"}
            )
            if response.status_code != 200:
                return None
            answer = response.json()
        except (httpx2.HTTPError, ValueError) as error:
            logger.warning("introspection failed: %s", type(error).__name__)
            return None
        if not isinstance(answer, dict) or answer.get("active") is not True:
            return None
        return AccessToken(
            token=token,
            client_id=answer.get("client_id", ""),
            scopes=(answer.get("scope") or "").split(),
            expires_at=answer.get("exp"),
            resource=answer.get("aud"),
            subject=answer.get("sub"),
            claims=answer,
        )


def authorization_server(provider: LoopbackProvider, issuer: str, introspection_secret: str, control_secret: str) -> ASGIApp:
    # Through AuthSettings, which keeps a path-less URL without a trailing slash (AnyHttpUrl adds one).
    settings = AuthSettings(issuer_url=issuer, resource_server_url=None)
    routes = create_auth_routes(
        provider=provider,
        issuer_url=settings.issuer_url,
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[BASE_SCOPE, ADMIN_SCOPE], default_scopes=[BASE_SCOPE, ADMIN_SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )

    async def introspect(request: Request) -> Response:
        if not _secret_matches(request, introspection_secret):
            return JSONResponse({"error": "invalid_client"}, 401)
        form = await request.form()
        token = form.get("token")
        access = await provider.load_access_token(token) if isinstance(token, str) else None
        if access is None:
            return JSONResponse({"active": False})
        return JSONResponse(
            {
                "active": True,
                "iss": issuer,
                "client_id": access.client_id,
                "scope": " ".join(access.scopes),
                "exp": access.expires_at,
                "aud": access.resource,
                "sub": access.subject,
                "token_type": "Bearer",
            }
        )

    async def testing_log(request: Request) -> Response:
        if not _secret_matches(request, control_secret):
            return JSONResponse({"error": "unauthorized"}, 401)
        return JSONResponse(
            {
                "registrations": list(provider.registrations),
                "authorizations": list(provider.authorizations),
                "token_requests": list(provider.token_requests),
            }
        )

    async def expire_access_tokens(request: Request) -> Response:
        if not _secret_matches(request, control_secret):
            return JSONResponse({"error": "unauthorized"}, 401)
        return JSONResponse({"expired": provider.expire_access_tokens()})

    routes += [
        Route("/introspect", introspect, methods=["POST"]),
        Route("/testing/log", testing_log, methods=["GET"]),
        Route("/testing/expire-access-tokens", expire_access_tokens, methods=["POST"]),
    ]
    return TokenRequestCapture(Starlette(routes=routes), provider)


def resource_server(resource: str, issuer: str, verifier: IntrospectionVerifier) -> ASGIApp:
    server = MCPServer(
        name="swift-oidc interop MCP server",
        version="1",
        token_verifier=verifier,
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=resource,
            required_scopes=[BASE_SCOPE],
            validate_token_resource=True,
        ),
    )

    @server.tool()
    def whoami() -> str:
        """Who the access token speaks for: the user, the client and the scopes granted."""
        token = get_access_token()
        assert token is not None
        return json.dumps({"sub": token.subject, "client_id": token.client_id, "scopes": token.scopes})

    @server.tool()
    def add(a: int, b: int) -> int:
        """The sum of two integers."""
        return a + b

    @server.tool()
    def admin_report() -> str:
        """A report only for tokens with mcp:admin (a 403 insufficient_scope otherwise)."""
        token = get_access_token()
        if token is None or ADMIN_SCOPE not in token.scopes:
            raise ValueError("mcp:admin is needed")  # ScopedToolsMiddleware answers 403 before this
        return f"admin report for {token.subject}"

    app = server.streamable_http_app(json_response=True, host="127.0.0.1")
    # Innermost, after the SDK's AuthenticationMiddleware and AuthContextMiddleware (the stack is built
    # at the first request).
    app.user_middleware.append(
        Middleware(ScopedToolsMiddleware, metadata_url=str(build_resource_metadata_url(AnyHttpUrl(resource))))
    )
    return app


class Server(uvicorn.Server):
    """Two servers in one event loop: main() handles the signals for both."""

    @contextlib.contextmanager
    def capture_signals(self):
        yield


async def serve(port: int, as_port: int, control_secret: str, access_token_ttl: int) -> None:
    resource = f"http://127.0.0.1:{port}/mcp"
    issuer = f"http://127.0.0.1:{as_port}"
    introspection_secret = secrets.token_urlsafe(32)
    provider = LoopbackProvider(issuer, resource, access_token_ttl)
    verifier = IntrospectionVerifier(f"{issuer}/introspect", introspection_secret)
    servers = [
        Server(uvicorn.Config(authorization_server(provider, issuer, introspection_secret, control_secret),
                              host="127.0.0.1", port=as_port, log_level="info")),
        Server(uvicorn.Config(resource_server(resource, issuer, verifier), host="127.0.0.1", port=port, log_level="info")),
    ]
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, lambda: [setattr(server, "should_exit", True) for server in servers])
    tasks = [asyncio.create_task(server.serve()) for server in servers]
    # One stopping (a port taken, a signal) stops the other.
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for server in servers:
        server.should_exit = True
    await asyncio.gather(*tasks, return_exceptions=True)
    await verifier.client.aclose()
    if not all(server.started for server in servers):
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="the MCP server (resource server)")
    parser.add_argument("--as-port", type=int, required=True, help="its authorization server")
    parser.add_argument("--control-secret-file", required=True, help="the secret of the /testing/ routes")
    parser.add_argument("--access-token-ttl", type=int, default=3600, help="seconds")
    arguments = parser.parse_args()
    with open(arguments.control_secret_file) as file:
        control_secret = file.read().strip()
    if not control_secret:
        parser.error("the control secret file is empty")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    asyncio.run(serve(arguments.port, arguments.as_port, control_secret, arguments.access_token_ttl))


if __name__ == "__main__":
    main()
