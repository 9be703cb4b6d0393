#!/usr/bin/env python3
"""Test user agent for django-oauth-toolkit 3.4.1 (scripts/dot-provider.sh): does what a person does
in its device pages, over HTTP, with python3's standard library only.

    dot-agent.py VERIFICATION_URI_COMPLETE | USER_CODE | file://PAGE [options]
        Approves a device authorization (RFC 8628): logs in to Django (/accounts/login/), enters the
        user code on the device page (/o/device/) and accepts on the confirmation page, so that the
        device polling the token endpoint gets its tokens. Prints {"user_code": ..., "result":
        "accepted"} (or "denied" with --deny). Exit status 0 when done, 1 when something failed.

A file:// URL is a local page that redirects with <meta http-equiv="refresh">, as `oidc` hands its
browser (the URL stays off the command line): the agent reads it and goes on to the URL it names. So
the agent can be `oidc login --flow device --browser scripts/dot-agent.py`.

Options:
    --issuer URL            the provider (default $OIDC_DOT_ISSUER; only its origin is used, for a bare
                            user code)
    --username NAME         default $OIDC_DOT_USERNAME, else alice
    --password-file FILE    default $OIDC_DOT_PASSWORD_FILE, else .build-dot/secrets/alice-password
    --deny                  deny instead of accepting
    --timeout SECONDS       per HTTP request (default 10)

Everything stays on the provider's origin (127.0.0.1); nothing is sent elsewhere, and no redirect to
another origin is followed.
"""
import argparse
import html.parser
import http.cookiejar
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def die(message: str) -> None:
    print(f"dot-agent: {message}", file=sys.stderr)
    sys.exit(1)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class FormParser(html.parser.HTMLParser):
    """The csrfmiddlewaretoken of the page's first form, and the first meta refresh target."""

    def __init__(self):
        super().__init__()
        self.csrf = None
        self.refresh = None

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "input" and values.get("name") == "csrfmiddlewaretoken" and self.csrf is None:
            self.csrf = values.get("value")
        if tag == "meta" and self.refresh is None and (values.get("http-equiv") or "").lower() == "refresh":
            match = re.match(r"\s*\d*\s*;\s*url\s*=\s*['\"]?([^'\"]*)", values.get("content") or "", re.IGNORECASE)
            if match:
                self.refresh = match.group(1).strip()


def parse(text: str) -> FormParser:
    parser = FormParser()
    parser.feed(text)
    return parser


class Browser:
    """A cookie jar on one origin; each redirect is followed by hand, and only on that origin."""

    def __init__(self, origin: str, timeout: float):
        self.origin = origin
        self.timeout = timeout
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()), NoRedirect())

    def request(self, method: str, url: str, form=None, referer=None):
        """(status, final URL, body text), following up to 5 redirects on the origin."""
        for _ in range(6):
            absolute = urllib.parse.urljoin(self.origin + "/", url)
            if origin_of(absolute) != self.origin:
                die(f"refusing to go to {absolute}: not {self.origin}")
            data = None if form is None else urllib.parse.urlencode(form).encode()
            headers = {"Referer": referer or absolute}
            if data is not None:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            request = urllib.request.Request(absolute, data=data, method=method, headers=headers)
            try:
                with self.opener.open(request, timeout=self.timeout) as response:
                    return response.status, absolute, response.read().decode(errors="replace")
            except urllib.error.HTTPError as error:
                location = error.headers.get("Location")
                if error.code in (301, 302, 303, 307, 308) and location:
                    url, method, form, referer = location, "GET", None, absolute
                    continue
                return error.code, absolute, error.read().decode(errors="replace")
            except OSError as error:
                die(f"{method} {absolute}: {error}")
        die(f"too many redirects from {url}")


def origin_of(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


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
    target = parse(text).refresh
    if not target or not target.startswith(("http://", "https://")):
        die(f"the local page {path} redirects to no http(s) URL")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description="Approves a django-oauth-toolkit device login as the test user.")
    parser.add_argument("code", help="verification_uri_complete, a user_code, or a file:// page redirecting to the first")
    parser.add_argument("--issuer", default=os.environ.get("OIDC_DOT_ISSUER"))
    parser.add_argument("--username", default=os.environ.get("OIDC_DOT_USERNAME", "alice"))
    parser.add_argument("--password-file", default=os.environ.get("OIDC_DOT_PASSWORD_FILE", os.path.join(ROOT, ".build-dot", "secrets", "alice-password")))
    parser.add_argument("--deny", action="store_true")
    parser.add_argument("--timeout", type=float, default=10)
    arguments = parser.parse_args()

    target = follow_local_page(arguments.code)
    if target.startswith(("http://", "https://")):
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)
        user_code = (query.get("user_code") or [""])[0]
        if not user_code:
            die(f"{target} carries no user_code")
        origin = origin_of(target)
    else:
        if not arguments.issuer:
            die("a bare user code needs --issuer or $OIDC_DOT_ISSUER")
        user_code = target
        origin = origin_of(arguments.issuer)
    try:
        with open(arguments.password_file, encoding="utf-8") as handle:
            password = handle.read().strip()
    except OSError as error:
        die(f"cannot read the password file: {error}")

    browser = Browser(origin, arguments.timeout)
    device_page = "/o/device/?" + urllib.parse.urlencode({"user_code": user_code})

    # 1. Log in, coming back to the device page.
    status, url, text = browser.request("GET", "/accounts/login/?" + urllib.parse.urlencode({"next": device_page}))
    csrf = parse(text).csrf
    if status != 200 or not csrf:
        die(f"the login page answered {status} without a form")
    status, url, text = browser.request(
        "POST", url, {"csrfmiddlewaretoken": csrf, "username": arguments.username, "password": password, "next": device_page}
    )
    # 2. The device page, where the code is entered (already filled in from the query).
    csrf = parse(text).csrf
    if status != 200 or not csrf or not urllib.parse.urlsplit(url).path.endswith("/o/device/"):
        die(f"the login did not lead to the device page (HTTP {status} at {url}): wrong password?")
    status, url, text = browser.request("POST", url, {"csrfmiddlewaretoken": csrf, "user_code": user_code})
    # 3. The confirmation page: accept (or deny).
    csrf = parse(text).csrf
    if status != 200 or not csrf or "/o/device-confirm/" not in url:
        die(f"the device page refused the code {user_code} (HTTP {status} at {url})")
    action = "deny" if arguments.deny else "accept"
    status, url, text = browser.request("POST", url, {"csrfmiddlewaretoken": csrf, "action": action})
    if status != 200 or "/o/device-grant-status/" not in url:
        die(f"the confirmation was not taken (HTTP {status} at {url})")
    print(json.dumps({"user_code": user_code, "result": "denied" if arguments.deny else "accepted"}))


if __name__ == "__main__":
    main()
