#!/usr/bin/env python3
"""Test user agent for glewlwyd 2.7.5: does what a person does in glewlwyd's login web app, through the
same REST calls that app makes (webapp/login.js), with python3's standard library only.

    glewlwyd-agent.py device USER_CODE | VERIFICATION_URI_COMPLETE | file://PAGE [--issuer URL] [options]
        Approves a device authorization (RFC 8628): logs in, grants the scopes the device asked for
        to its client, and completes the verification, so that the device polling the token endpoint
        gets its tokens. Prints {"client_id": ..., "scope": ..., "result": "deviceComplete"}.
    glewlwyd-agent.py authorize AUTHORIZATION_URL | file://PAGE [options]
        Completes an authorization request (plain or PAR, request_uri=...): logs in, grants the
        scopes, and prints the redirect to the client's redirect_uri (with code=..., state=..., iss=...,
        or error=...) on stdout. Exit status 0 when it carries a code, 3 when it carries an error.

    glewlwyd-agent.py authorize URL --deliver [options]
        As a browser for `oidc login --browser`: URL may be oidc's loopback start URL (followed to the
        authorization URL), and the final redirect is sent to the client's loopback redirect URI.

    glewlwyd-agent.py authorize AUTHORIZATION_URL --session-file FILE [options]
        The same, and keeps the user's glewlwyd session (its cookies) in FILE (0600), for end-session.
    glewlwyd-agent.py end-session --session-file FILE --id-token-hint-file FILE [--issuer URL]
        Ends the user's OP session as an RP-initiated logout and glewlwyd's logout page do: GET
        ISSUER/end_session?id_token_hint=... (the ID token read from its file, kept off the command
        line; without it glewlwyd answers 200 and ends nothing) with the cookies of FILE, which redirects to login.html?sid=SID&plugin=PLUGIN&prompt=end_session,
        then DELETE API/PLUGIN/session/SID (glewlwyd then POSTs a back-channel logout token to the
        backchannel_logout_uri of every client of that session) and DELETE API/auth/ (the login).
        Prints {"sid": ..., "plugin": ..., "result": "sessionEnded"}. Needs an issuer with session
        management (OIDC_GLEWLWYD_LOGOUT_ISSUER, the default).
    glewlwyd-agent.py backchannel-uri CLIENT_ID URL [--session-required true|false]
        As admin (password in $OIDC_GLEWLWYD_ADMIN_PASSWORD_FILE): sets the client's
        backchannel_logout_uri to URL (GET API/client/CLIENT_ID, PUT it back changed), for a test
        whose listener's port is known only once it listens; and, when given, its
        backchannel_logout_session_required (whether its logout tokens carry sid). Prints {"client_id": ..., "backchannel_logout_uri": ...}.

    glewlwyd-agent.py ciba [--issuer URL] [--client-id ID] [--binding-message MSG] [--deny] [--grant "SCOPES"]
        Approves (or with --deny cancels) the user's pending CIBA request (OpenID CIBA Core 1.0): logs
        in (POST API/auth/), lists the user's pending requests (GET ISSUER/ciba_user_list), takes the
        newest one of CLIENT_ID with that binding_message, grants its scopes to the client
        (PUT API/auth/grant/CLIENT_ID), then GETs its connect_uri + "&g_continue" (302 to
        login.html?...ciba_message=complete), or its cancel_uri (ciba_message=cancelled, the client
        then gets access_denied). Prints {"client_id", "binding_message", "scopes", "result"}.
        Default issuer $OIDC_GLEWLWYD_CIBA_ISSUER.
    glewlwyd-agent.py ciba-notification-uri CLIENT_ID URL
        As backchannel-uri, for the client's backchannel_client_notification_endpoint (CIBA ping/push).

A file:// URL is a local page that redirects with <meta http-equiv="refresh">, as `oidc` hands its
browser (the URL stays off the command line): the agent reads it and goes on to the URL it names. So
the agent can be `oidc login --browser "scripts/glewlwyd-agent.py device"`.

Options:
    --username NAME         default $OIDC_GLEWLWYD_USERNAME, else alice
    --password-file FILE    default $OIDC_GLEWLWYD_PASSWORD_FILE, else .build-glewlwyd/secrets/alice-password
    --grant "SCOPES"        scopes the user grants (default: all that the request asks for)
    --issuer URL            issuer of the plugin (device only; default $OIDC_GLEWLWYD_ISSUER)
    --timeout SECONDS       per HTTP request (default 10)
    --cafile FILE           CA to trust for https:// (default $OIDC_GLEWLWYD_CA_FILE: glewlwyd.sh --tls)

The REST calls, as glewlwyd's login page makes them:
  1. GET the verification URI (PLUGIN/device?code=USER_CODE) or the authorization URL, without
     following redirects: glewlwyd answers 302 to login.html?client_id=...&scope=...&callback_url=...
  2. POST API/auth/ {"username", "password"}: the session cookie (password scheme).
  3. PUT API/auth/grant/CLIENT_ID {"scope": "space separated"}: the consent.
  4. GET callback_url + "&g_continue": 302 to login.html?...&prompt=deviceComplete (device), or to the
     client's redirect_uri with the code (authorization).
Everything stays on the URLs given (127.0.0.1); nothing is sent elsewhere.
"""
import argparse
import html.parser
import http.cookiejar
import json
import os
import re
import stat
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(message: str, status: int = 1) -> None:
    print(f"glewlwyd-agent: {message}", file=sys.stderr)
    sys.exit(status)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class Browser:
    """A cookie jar and no automatic redirects: each 302 is looked at. With session_file, the jar is
    read from that file (when it exists) and save() writes it back, session cookies included."""

    def __init__(self, timeout: float, cafile=None, session_file=None):
        self.timeout = timeout
        self.session_file = session_file
        self.jar = http.cookiejar.LWPCookieJar(session_file) if session_file else http.cookiejar.CookieJar()
        if session_file and os.path.exists(session_file):
            self.jar.load(ignore_discard=True, ignore_expires=True)
        context = ssl.create_default_context(cafile=cafile) if cafile else None
        self.opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context),
                                                  urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())

    def save(self) -> None:
        """Writes the cookies to session_file, readable by this user only (they are the login)."""
        if not self.session_file:
            return
        descriptor = os.open(self.session_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
        os.close(descriptor)
        os.chmod(self.session_file, stat.S_IRUSR | stat.S_IWUSR)
        self.jar.save(ignore_discard=True, ignore_expires=True)

    def request(self, method: str, url: str, body=None):
        """(status, Location header or None, body text)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with self.opener.open(request, timeout=self.timeout) as response:
                return response.status, response.headers.get("Location"), response.read().decode(errors="replace")
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Location"), error.read().decode(errors="replace")
        except OSError as error:
            die(f"{method} {url}: {error}")


class RefreshParser(html.parser.HTMLParser):
    """The URL of the first <meta http-equiv="refresh" content="0; url=..."> (attribute values come unescaped)."""

    def __init__(self):
        super().__init__()
        self.target = None

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag != "meta" or self.target is not None or (values.get("http-equiv") or "").lower() != "refresh":
            return
        match = re.match(r"\s*\d*\s*;\s*url\s*=\s*['\"]?([^'\"]*)", values.get("content") or "", re.IGNORECASE)
        if match:
            self.target = match.group(1).strip()


def follow_local_page(url: str) -> str:
    """url itself, or for a file:// page (what `oidc` opens its browser with) the http(s) URL it redirects to."""
    if not url.startswith("file://"):
        return url
    path = urllib.request.url2pathname(urllib.parse.urlsplit(url).path)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(64 * 1024)
    except OSError as error:
        die(f"cannot read the local page {path}: {error}")
    parser = RefreshParser()
    parser.feed(text)
    if not parser.target or not parser.target.startswith(("http://", "https://")):
        die(f"the local page {path} redirects to no http(s) URL")
    return parser.target


def env_defaults() -> dict:
    """$OIDC_GLEWLWYD_* from the environment, else from .build-glewlwyd/env.json."""
    values = {}
    path = os.environ.get("OIDC_GLEWLWYD_ENV_FILE") or os.path.join(ROOT, ".build-glewlwyd", "env.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as handle:
            values.update(json.load(handle))
    values.update({k: v for k, v in os.environ.items() if k.startswith("OIDC_GLEWLWYD_")})
    return values


def api_of(url: str) -> str:
    """http://127.0.0.1:PORT/api of any URL under it (glewlwyd's api_prefix is `api`)."""
    parts = urllib.parse.urlsplit(url)
    segments = parts.path.split("/")
    if "api" not in segments:
        die(f"{url} is not under glewlwyd's /api prefix")
    path = "/".join(segments[: segments.index("api") + 1])
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def login_page_params(location: str) -> dict:
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query, keep_blank_values=True)
    return {k: v[0] for k, v in query.items()}


def with_continue(url: str) -> str:
    return url + ("&g_continue" if "?" in url else "?g_continue")


def log_in_and_grant(browser: Browser, api: str, args, params: dict) -> None:
    client_id, scope = params.get("client_id"), params.get("scope", "")
    if not client_id:
        die(f"glewlwyd's login redirect names no client_id: {params}")
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.readline().strip()
    status, _, text = browser.request("POST", f"{api}/auth/", {"username": args.username, "password": password})
    if status != 200:
        die(f"login of {args.username} refused: HTTP {status} {text[:200]}")
    grant = scope if args.grant is None else args.grant
    status, _, text = browser.request("PUT", f"{api}/auth/grant/{urllib.parse.quote(client_id, safe='')}",
                                      {"scope": grant})
    if status != 200:
        die(f"grant of '{grant}' to {client_id} refused: HTTP {status} {text[:200]}")
    # RFC 9396: the login page names the requested authorization_details types (comma separated) and
    # the plugin; the user consents to each (PUT API/PLUGIN/rar/CLIENT_ID/TYPE/1), as login.js does.
    # Without a consent glewlwyd sends the user back to its login page.
    types, plugin = params.get("authorization_details"), params.get("plugin")
    for kind in filter(None, (types or "").split(",")):
        if not plugin:
            die(f"glewlwyd's login redirect names authorization_details but no plugin: {params}")
        url = (f"{api}/{urllib.parse.quote(plugin, safe='')}/rar/{urllib.parse.quote(client_id, safe='')}/"
               f"{urllib.parse.quote(kind, safe='')}/1")
        status, _, text = browser.request("PUT", url)
        if status != 200:
            die(f"consent to the authorization_details type {kind} refused: HTTP {status} {text[:200]}")


def cmd_device(args, defaults: dict) -> None:
    browser = Browser(args.timeout, args.cafile)
    args.code = follow_local_page(args.code)
    if args.code.startswith(("http://", "https://")):
        url = args.code
    else:
        issuer = args.issuer or defaults.get("OIDC_GLEWLWYD_ISSUER")
        if not issuer:
            die("no --issuer and no OIDC_GLEWLWYD_ISSUER (run scripts/glewlwyd.sh start)")
        url = f"{issuer.rstrip('/')}/device?code={urllib.parse.quote(args.code, safe='')}"
    api = api_of(url)
    status, location, text = browser.request("GET", url)
    if status != 302 or not location:
        die(f"GET {url}: HTTP {status} without a redirect: {text[:200]}")
    params = login_page_params(location)
    if params.get("prompt") in ("deviceCodeError", "deviceServerError"):
        die(f"glewlwyd refused the user code ({params['prompt']}): unknown, expired or already used")
    log_in_and_grant(browser, api, args, params)
    callback = params.get("callback_url")
    if not callback:
        die(f"glewlwyd's login redirect has no callback_url: {location}")
    status, location, text = browser.request("GET", with_continue(callback))
    result = login_page_params(location or "").get("prompt")
    if status != 302 or result != "deviceComplete":
        die(f"device verification not completed: HTTP {status}, prompt={result}, {text[:200]}")
    print(json.dumps({"client_id": params["client_id"], "scope": args.grant if args.grant is not None
                      else params.get("scope", ""), "result": result}))


def is_loopback(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "::1", "localhost")


def admin_browser(args, defaults: dict):
    """(a Browser logged in as admin, API URL): the password from $OIDC_GLEWLWYD_ADMIN_PASSWORD_FILE."""
    password_file = defaults.get("OIDC_GLEWLWYD_ADMIN_PASSWORD_FILE")
    if not password_file or not os.path.isfile(password_file):
        die("no OIDC_GLEWLWYD_ADMIN_PASSWORD_FILE (run scripts/glewlwyd.sh start)")
    api = defaults.get("OIDC_GLEWLWYD_API")
    if not api:
        die("no OIDC_GLEWLWYD_API (run scripts/glewlwyd.sh start)")
    with open(password_file, encoding="utf-8") as handle:
        password = handle.readline().strip()
    browser = Browser(args.timeout, args.cafile)
    status, _, text = browser.request("POST", f"{api}/auth/", {"username": "admin", "password": password})
    if status != 200:
        die(f"admin login refused: HTTP {status} {text[:200]}")
    return browser, api


def deliver(args, location: str) -> None:
    """As a browser does: the redirect (with a code or an error) goes to the client's loopback redirect URI."""
    if not is_loopback(location):
        die(f"not delivered: the redirect URI is not on loopback: {location}", 3)
    status, _, text = Browser(args.timeout).request("GET", location)
    print(f"glewlwyd-agent: delivered to the redirect URI: HTTP {status}", file=sys.stderr)
    if status >= 500:
        die(f"the redirect URI answered HTTP {status}: {text[:200]}", 3)


def cmd_authorize(args, defaults: dict) -> None:
    browser = Browser(args.timeout, args.cafile, args.session_file)
    args.url = follow_local_page(args.url)
    if args.deliver:
        # oidc's start URL (http://127.0.0.1:PORT/<random>) redirects to the authorization URL.
        for _ in range(3):
            if "api" in urllib.parse.urlsplit(args.url).path.split("/") or not is_loopback(args.url):
                break
            status, location, text = browser.request("GET", args.url)
            if status not in (301, 302, 303, 307) or not location:
                die(f"GET {args.url}: HTTP {status} without a redirect: {text[:200]}", 3)
            args.url = urllib.parse.urljoin(args.url, location)
    api = api_of(args.url)
    status, location, text = browser.request("GET", args.url)
    if status != 302 or not location:
        die(f"GET {args.url}: HTTP {status} without a redirect: {text[:300]}", 3)
    parts = urllib.parse.urlsplit(location)
    if not parts.path.endswith("/login.html"):
        print(location)  # an error redirect to the client, or a code without a login (not seen in 2.7.5)
        if args.deliver:
            deliver(args, location)
        sys.exit(0 if "code=" in parts.query else 3)
    params = login_page_params(location)
    log_in_and_grant(browser, api, args, params)
    callback = params.get("callback_url")
    if not callback:
        die(f"glewlwyd's login redirect has no callback_url: {location}")
    status, location, text = browser.request("GET", with_continue(callback))
    if status != 302 or not location:
        die(f"authorization not completed: HTTP {status} {text[:300]}", 3)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)
    fragment = urllib.parse.parse_qs(urllib.parse.urlsplit(location).fragment)
    if urllib.parse.urlsplit(location).path.endswith("/login.html"):
        die(f"glewlwyd sent the user back to its login page: {location}", 3)
    browser.save()
    print(location)
    if args.deliver:
        deliver(args, location)
    sys.exit(0 if "code" in query or "code" in fragment else 3)


def cmd_end_session(args, defaults: dict) -> None:
    if not os.path.isfile(args.session_file):
        die(f"no session file {args.session_file} (authorize --session-file first)")
    issuer = args.issuer or defaults.get("OIDC_GLEWLWYD_LOGOUT_ISSUER")
    if not issuer:
        die("no --issuer and no OIDC_GLEWLWYD_LOGOUT_ISSUER (run scripts/glewlwyd.sh start)")
    browser = Browser(args.timeout, args.cafile, args.session_file)
    api = api_of(issuer)
    with open(args.id_token_hint_file, encoding="utf-8") as handle:
        hint = handle.readline().strip()
    url = f"{issuer.rstrip('/')}/end_session"
    status, location, text = browser.request("GET", url + "?" + urllib.parse.urlencode({"id_token_hint": hint}))
    if status != 302 or not location:
        die(f"GET {url}: HTTP {status} without a redirect (session management off, or no such session?)")
    params = login_page_params(location)
    sid, plugin = params.get("sid"), params.get("plugin")
    if params.get("prompt") != "end_session" or not sid or not plugin:
        die(f"glewlwyd's end_session redirect names no session: {location}")
    session = f"{api}/{urllib.parse.quote(plugin, safe='')}/session/{urllib.parse.quote(sid, safe='')}"
    status, _, text = browser.request("DELETE", session)
    if status != 200:
        die(f"DELETE {session}: HTTP {status} {text[:200]}")
    status, _, text = browser.request("DELETE", f"{api}/auth/")
    if status != 200:
        die(f"DELETE {api}/auth/: HTTP {status} {text[:200]}")
    browser.save()
    print(json.dumps({"sid": sid, "plugin": plugin, "result": "sessionEnded"}))


def cmd_backchannel_uri(args, defaults: dict) -> None:
    if not args.url.startswith(("http://", "https://")):
        die(f"{args.url} is not an http(s) URL")
    browser, api = admin_browser(args, defaults)
    client_url = f"{api}/client/{urllib.parse.quote(args.client_id, safe='')}"
    status, _, text = browser.request("GET", client_url)
    if status != 200:
        die(f"GET {client_url}: HTTP {status}")  # the body holds the client's secret: not printed
    client = json.loads(text)
    client[args.property] = args.url
    if getattr(args, "session_required", None) is not None:
        client["backchannel_logout_session_required"] = args.session_required
    client.pop("source", None)
    status, _, text = browser.request("PUT", client_url, client)
    if status != 200:
        die(f"PUT {client_url}: HTTP {status} {text[:200]}")
    browser.request("DELETE", f"{api}/auth/")
    print(json.dumps({"client_id": args.client_id, args.property: args.url}))


def cmd_ciba(args, defaults: dict) -> None:
    issuer = (args.issuer or defaults.get("OIDC_GLEWLWYD_CIBA_ISSUER") or "").rstrip("/")
    if not issuer:
        die("no --issuer and no OIDC_GLEWLWYD_CIBA_ISSUER (run scripts/glewlwyd.sh start)")
    api = api_of(issuer)
    browser = Browser(args.timeout, args.cafile)
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.readline().strip()
    status, _, text = browser.request("POST", f"{api}/auth/", {"username": args.username, "password": password})
    if status != 200:
        die(f"login of {args.username} refused: HTTP {status} {text[:200]}")
    status, _, text = browser.request("GET", f"{issuer}/ciba_user_list")
    if status != 200:
        die(f"GET {issuer}/ciba_user_list: HTTP {status} {text[:200]}")
    pending = [entry for entry in json.loads(text)
               if (args.client_id is None or entry.get("client_id") == args.client_id)
               and (args.binding_message is None or entry.get("binding_message") == args.binding_message)]
    if not pending:
        die(f"no pending CIBA request of {args.username} for client_id={args.client_id} "
            f"binding_message={args.binding_message}")
    entry = pending[-1]
    if args.deny:
        url, expected = entry["cancel_uri"], "cancelled"
    else:
        grant = " ".join(entry.get("scopes") or []) if args.grant is None else args.grant
        client = urllib.parse.quote(entry["client_id"], safe="")
        status, _, text = browser.request("PUT", f"{api}/auth/grant/{client}", {"scope": grant})
        if status != 200:
            die(f"grant of '{grant}' to {entry['client_id']} refused: HTTP {status} {text[:200]}")
        url, expected = with_continue(entry["connect_uri"]), "complete"
    status, location, text = browser.request("GET", url)
    result = login_page_params(location or "").get("ciba_message")
    browser.request("DELETE", f"{api}/auth/")
    if status != 302 or result != expected:
        die(f"CIBA request not {expected}: HTTP {status}, Location {location}, {text[:200]}", 3)
    print(json.dumps({"client_id": entry["client_id"], "binding_message": entry.get("binding_message"),
                      "scopes": entry.get("scopes"), "result": result}))


def main() -> None:
    defaults = env_defaults()
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--username", default=defaults.get("OIDC_GLEWLWYD_USERNAME", "alice"))
    common.add_argument("--password-file", default=defaults.get(
        "OIDC_GLEWLWYD_PASSWORD_FILE", os.path.join(ROOT, ".build-glewlwyd", "secrets", "alice-password")))
    common.add_argument("--grant")
    common.add_argument("--timeout", type=float, default=10.0)
    common.add_argument("--cafile", default=defaults.get("OIDC_GLEWLWYD_CA_FILE"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    device = commands.add_parser("device", parents=[common])
    device.add_argument("code", help="user_code, or verification_uri_complete, or a file:// page redirecting to it")
    device.add_argument("--issuer")
    device.set_defaults(run=cmd_device)
    authorize = commands.add_parser("authorize", parents=[common])
    authorize.add_argument("url", help="the authorization URL (authorization_endpoint?...), or a file:// page redirecting to it")
    authorize.add_argument("--session-file", help="keep the user's glewlwyd session (cookies) in this file, for end-session")
    authorize.add_argument("--deliver", action="store_true",
                           help="as a browser: follow a loopback start URL to the authorization URL, and GET the final "
                                "redirect (the client's loopback redirect URI) so that the client gets the code")
    authorize.set_defaults(run=cmd_authorize)
    end_session = commands.add_parser("end-session", parents=[common])
    end_session.add_argument("--session-file", required=True, help="the file authorize --session-file wrote")
    end_session.add_argument("--id-token-hint-file", required=True, help="a file holding the ID token of the login")
    end_session.add_argument("--issuer", help="issuer with session management (default $OIDC_GLEWLWYD_LOGOUT_ISSUER)")
    end_session.set_defaults(run=cmd_end_session)
    backchannel = commands.add_parser("backchannel-uri", parents=[common])
    backchannel.add_argument("client_id")
    backchannel.add_argument("url", help="the new backchannel_logout_uri")
    backchannel.add_argument("--session-required", choices=["true", "false"],
                             help="the client's backchannel_logout_session_required")
    backchannel.set_defaults(run=cmd_backchannel_uri, property="backchannel_logout_uri")
    ciba = commands.add_parser("ciba", parents=[common])
    ciba.add_argument("--issuer", help="issuer with CIBA (default $OIDC_GLEWLWYD_CIBA_ISSUER)")
    ciba.add_argument("--client-id", help="only a request of this client")
    ciba.add_argument("--binding-message", help="only a request with this binding_message")
    ciba.add_argument("--deny", action="store_true", help="cancel the request instead of approving it")
    ciba.set_defaults(run=cmd_ciba)
    notification = commands.add_parser("ciba-notification-uri", parents=[common])
    notification.add_argument("client_id")
    notification.add_argument("url", help="the new backchannel_client_notification_endpoint")
    notification.set_defaults(run=cmd_backchannel_uri, property="backchannel_client_notification_endpoint")
    args = parser.parse_args()
    if args.command in ("device", "authorize", "ciba") and not os.path.isfile(args.password_file):
        die(f"no password file {args.password_file} (run scripts/glewlwyd.sh start)")
    args.run(args, defaults)


if __name__ == "__main__":
    main()
