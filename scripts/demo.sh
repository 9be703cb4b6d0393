#!/usr/bin/env bash
# The main job: `oidc demo`, a full login through the loopback listener against the embedded test
# provider, the verified claims, an API call through the session, the refresh on a 401, and the
# logout. With a browser (a display and xdg-open, or $BROWSER) you click "Sign in" yourself; without
# one, oidc signs in on the provider's page itself, over HTTP, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
# The same build `make install` installs (release, static Swift runtime, stripped).
scripts/build-release.sh >&2
oidc=.build/install/bin/oidc
"$oidc" --version
exec "$oidc" demo "$@"
