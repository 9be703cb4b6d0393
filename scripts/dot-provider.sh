#!/usr/bin/env bash
# Runs django-oauth-toolkit 3.4.1 (PyPI), an independent OpenID provider whose device authorization
# grant (RFC 8628) sends no ID token, in the background on 127.0.0.1, for the interop tests. No root
# needed: everything lives under .build-dot/ and runs as whoever runs this. See docs/interop.md.
#
#   scripts/dot-provider.sh start [PORT]
#       Installs Tests/Interop/dot-requirements.txt into .build-dot/venv (made with `python3 -m venv`,
#       reused when present), generates a throw-away Django project in .build-dot/site (settings with
#       oauth2_provider, OIDC on, an RSA key made by openssl, the device grant's pages), a new SQLite
#       database with the user alice (password in .build-dot/secrets/alice-password, 0600) and the
#       public client oidc-device (device grant, openid scope, RS256), the confidential client
#       oidc-web (code flow for a web app on any loopback port, no consent page, RP-initiated
#       logout back to /signed-out; secret in .build-dot/secrets/oidc-web-secret, 0600), starts Django's server on
#       127.0.0.1:PORT (default 9410), waits at most 30 s for its discovery document and prints shell
#       `export OIDC_DOT_...=...` lines on stdout (also in .build-dot/env.sh): the issuer, the device
#       authorization endpoint (the discovery document does not name it), the client ids, the user
#       and the paths of the password and secret files, never a secret. Already running on PORT: prints them again.
#   scripts/dot-provider.sh stop [PORT]
#       Stops it (SIGTERM, then SIGKILL after 10 s) and removes its database. Not running: succeeds.
#   scripts/dot-provider.sh status
#       Running and answering: prints the export lines, exit 0. Otherwise says why on stderr, exit 1.
#
# The user approves device logins with scripts/dot-agent.py (logs in to Django, enters the code,
# accepts), which reads the OIDC_DOT_* variables.
# Environment: PYTHON (default python3, 3.10 or newer) makes the virtualenv; DOT_STATE_DIR (default
# .build-dot); DOT_DEVICE_INTERVAL (the device grant's polling interval, default 1 s).
# Files: .build-dot/{venv/,site/,secrets/,dot.pid,dot.log,port,env.sh}.
set -euo pipefail
umask 077   # the database (a password hash, tokens), the secrets and the log: this user's only

root=$(cd "$(dirname "$0")/.." && pwd)
state="${DOT_STATE_DIR:-$root/.build-dot}"
venv="$state/venv"
site="$state/site"
secrets="$state/secrets"
pid_file="$state/dot.pid"
log_file="$state/dot.log"
port_file="$state/port"
env_file="$state/env.sh"
stamp_file="$venv/.requirements.sha256"
requirements="$root/Tests/Interop/dot-requirements.txt"
python=${PYTHON:-python3}
interval=${DOT_DEVICE_INTERVAL:-1}
default_port=9410
client_id="oidc-device"
web_client_id="oidc-web"
username="alice"
start_timeout=30   # seconds, for the discovery document to answer 200
stop_timeout=10    # seconds, after SIGTERM before SIGKILL

peer=dot-provider
# shellcheck source=lib/peer.sh
. "$(dirname "$0")/lib/peer.sh"

die() {
    echo "dot-provider: $*" >&2
    exit 1
}

usage() {
    echo "usage: $0 start [PORT] | stop [PORT] | status" >&2
    exit 2
}

# The PID in the pid file, if that process is alive and is this Django server (not a reused PID).
running_pid() { pid_in "$pid_file" "$site/manage.py"; }

# Fails unless the discovery document at PORT answers 200 within 2 s.
answers() {
    "$venv/bin/python" - "http://127.0.0.1:$1/o/.well-known/openid-configuration" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=2) as response:
        sys.exit(0 if response.status == 200 else 1)
except Exception:
    sys.exit(1)
PY
}

port_in_use() { tcp_port_in_use "$venv/bin/python" "$1"; }

ensure_dot_venv() {
    mkdir -p "$state"
    ensure_venv "$python" "$venv" "$requirements" "Django 5.2"
}

# The Django project: settings, URLs, the login page, and the provisioning script. Written anew at
# every start (the port is in the settings); the RSA key and the secrets are kept.
write_site() {
    local port=$1
    mkdir -p "$site/dotsite" "$site/templates/registration"
    (umask 077 && mkdir -p "$secrets")
    if [ ! -s "$secrets/oidc-rsa.pem" ]; then
        (umask 077 && openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$secrets/oidc-rsa.pem" 2>/dev/null) ||
            die "openssl could not make the RSA key"
    fi
    if [ ! -s "$secrets/django-secret-key" ]; then
        (umask 077 && openssl rand -hex 32 >"$secrets/django-secret-key")
    fi
    if [ ! -s "$secrets/$web_client_id-secret" ]; then
        (umask 077 && openssl rand -hex 24 >"$secrets/$web_client_id-secret")
    fi
    if [ ! -s "$secrets/$username-password" ]; then
        (umask 077 && openssl rand -hex 16 >"$secrets/$username-password")
    fi
    echo "$port" >"$port_file"

    cat >"$site/manage.py" <<'PY'
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dotsite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
PY
    : >"$site/dotsite/__init__.py"
    cat >"$site/dotsite/settings.py" <<PY
# Generated by scripts/dot-provider.sh: a throw-away provider for the interop tests, on loopback only.
from pathlib import Path

STATE = Path("$state")
PORT = $port
ORIGIN = f"http://127.0.0.1:{PORT}"

SECRET_KEY = (STATE / "secrets" / "django-secret-key").read_text().strip()
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "dotsite.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [Path(__file__).resolve().parent.parent / "templates"],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": ["django.template.context_processors.request", "django.contrib.auth.context_processors.auth"]},
}]
# Clients in parallel (the tests run at once): each write transaction takes SQLite's lock when it
# begins and the others wait for it, instead of "database is locked" (a 500) when two try to upgrade.
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": STATE / "db.sqlite3",
                         "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 30}}}
STATIC_URL = "static/"
USE_TZ = True
LOGIN_URL = "/accounts/login/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": (STATE / "secrets" / "oidc-rsa.pem").read_text(),
    "SCOPES": {"openid": "OpenID Connect", "profile": "Your profile", "read": "Read"},
    "DEFAULT_SCOPES": ["openid"],
    "OAUTH_DEVICE_VERIFICATION_URI": f"{ORIGIN}/o/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": f"{ORIGIN}/o/device/?user_code={{user_code}}",
    "DEVICE_FLOW_INTERVAL": $interval,
    # RP-initiated logout (the web client's sign-out): no confirmation page when the ID token hint
    # names the user.
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    "OIDC_RP_INITIATED_LOGOUT_ALWAYS_PROMPT": False,
}
LOGGING = {
    "version": 1,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django": {"handlers": ["console"], "level": "INFO"}, "oauth2_provider": {"handlers": ["console"], "level": "INFO"}},
}
PY
    cat >"$site/dotsite/urls.py" <<'PY'
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
]
PY
    cat >"$site/templates/registration/login.html" <<'HTML'
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Log in</title></head>
<body>
<form method="post" action="">
{% csrf_token %}
{{ form.as_p }}
<input type="hidden" name="next" value="{{ next }}">
<button type="submit">Log in</button>
</form>
</body></html>
HTML
    cat >"$site/provision.py" <<PY
# Generated by scripts/dot-provider.sh: the user and the public device client.
import os
import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dotsite.settings")
django.setup()

from django.contrib.auth import get_user_model
from oauth2_provider.models import get_application_model

password = open("$secrets/$username-password").read().strip()
user, _ = get_user_model().objects.get_or_create(username="$username")
user.set_password(password)
user.save()
Application = get_application_model()
Application.objects.filter(client_id="$client_id").delete()
Application.objects.create(
    client_id="$client_id",
    name="swift-oidc device client",
    user=user,
    client_type=Application.CLIENT_PUBLIC,
    authorization_grant_type=Application.GRANT_DEVICE_CODE,
    algorithm=Application.RS256_ALGORITHM,
    client_secret="",
)
Application.objects.filter(client_id="$web_client_id").delete()
Application.objects.create(
    client_id="$web_client_id",
    name="swift-oidc web sign-in",
    user=user,
    client_type=Application.CLIENT_CONFIDENTIAL,
    authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
    algorithm=Application.RS256_ALGORITHM,
    client_secret=open("$secrets/$web_client_id-secret").read().strip(),
    redirect_uris="http://127.0.0.1/auth/callback",
    post_logout_redirect_uris="http://127.0.0.1/signed-out",
    skip_authorization=True,
)
PY
}

export_lines() {
    local port=$1 origin="http://127.0.0.1:$1"
    cat <<EOF
export OIDC_DOT_ISSUER=$origin/o
export OIDC_DOT_DEVICE_AUTHORIZATION_ENDPOINT=$origin/o/device-authorization/
export OIDC_DOT_CLIENT_ID=$client_id
export OIDC_DOT_USERNAME=$username
export OIDC_DOT_PASSWORD_FILE=$secrets/$username-password
export OIDC_DOT_WEB_CLIENT_ID=$web_client_id
export OIDC_DOT_WEB_CLIENT_SECRET_FILE=$secrets/$web_client_id-secret
EOF
}

cmd_start() {
    [ $# -le 1 ] || usage
    local port=${1:-$default_port}
    check_port "$port"
    ensure_dot_venv

    local pid
    if pid=$(running_pid); then
        if [ "$(cat "$port_file" 2>/dev/null)" = "$port" ] && answers "$port"; then
            cat "$env_file"
            return 0
        fi
        die "already running (PID $pid, port $(cat "$port_file" 2>/dev/null)); run '$0 stop' first"
    fi
    rm -f "$pid_file"
    port_in_use "$port" && die "something else is listening on 127.0.0.1:$port; choose another port"

    write_site "$port"
    rm -f "$state/db.sqlite3"
    (cd "$site" && "$venv/bin/python" manage.py migrate --no-input >"$log_file" 2>&1) || {
        tail -n 20 "$log_file" >&2
        die "the database could not be made (manage.py migrate)"
    }
    (cd "$site" && "$venv/bin/python" provision.py >>"$log_file" 2>&1) || {
        tail -n 20 "$log_file" >&2
        die "the user and client could not be made (provision.py)"
    }

    # --noreload: one process, no file watcher.
    pid=$(cd "$site" && PYTHONUNBUFFERED=1 launch_detached "$log_file" "$venv/bin/python" "$site/manage.py" runserver --noreload "127.0.0.1:$port")
    echo "$pid" >"$pid_file"
    ready() { answers "$port" && export_lines "$port" >"$env_file" && cat "$env_file"; }
    await_start "$pid" "http://127.0.0.1:$port/o/.well-known/openid-configuration"
}

# Stops PID (scripts/lib/peer.sh) and removes its pid file and database.
stop_pid() {
    stop_process "$1" "$stop_timeout"
    rm -f "$pid_file" "$state/db.sqlite3"
}

cmd_stop() { peer_stop "$@"; }

cmd_status() {
    [ $# -eq 0 ] || usage
    local pid port
    pid=$(running_pid) || die "not running"
    port=$(cat "$port_file" 2>/dev/null) || die "running (PID $pid) but $port_file is missing"
    answers "$port" || die "running (PID $pid) but http://127.0.0.1:$port/o/.well-known/openid-configuration does not answer 200"
    cat "$env_file"
}

peer_main "$@"
