# The two entry points of the README: `make demo` (the main job) and `make test` (the whole suite).
SWIFT ?= swift
PREFIX ?= /usr/local
# Swift Testing starts every test at once unless told otherwise. On two cores that starves Swift's
# cooperative pool (one thread a core) for tens of seconds: with two busy loops beside, 28 tests of
# 825 failed, and 25 with every bound 4 times longer (PostgreSQL migrations and loopback logins
# still unanswered after 20 s); 12 at a time, none failed on a bound and the run took 173 s instead
# of 253. So 12 at a time: set SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH to change it. The
# time bounds the tests have left come from one scale, OIDC_TEST_TIME_SCALE (4 by default;
# CONTRIBUTING.md). The tests hold a few thousand descriptors together (test providers, listeners,
# connections), more than the usual soft limit of 1024: the test runs raise it (to at most the
# hard limit).
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH ?= 12
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH
# Extra flags for the debug build the tests and the examples share (.build/debug), passed by every
# step so that none rebuilds what another built; none by default. Not `-debug-info-format none`:
# `swift package generate-documentation` (make docs) builds with the default flags, and the whole
# package was then built twice. Not `--disable-index-store`: `swift test` finds its tests with it.
SWIFT_BUILD_FLAGS ?=
export SWIFT_BUILD_FLAGS
FILES = ulimit -n 16384 2> /dev/null || ulimit -n "$$(ulimit -Hn)";
# The suite is meant to be run as an ordinary user (CONTRIBUTING.md; .ci/run runs it as one). Run by
# root, its tests run as root in a default container does: without CAP_NET_ADMIN (setpriv), so a
# socket option that needs it fails here too; the tests about other users then act as `nobody`.
UNPRIVILEGED := $(shell [ "$$(id -u)" = 0 ] && command -v setpriv > /dev/null && echo "setpriv --bounding-set=-net_admin --inh-caps=-net_admin --")
WHO = echo "make: running the tests as $$(id -un) (uid $$(id -u))$(if $(UNPRIVILEGED), without CAP_NET_ADMIN; the suite is meant for an ordinary user: CONTRIBUTING.md)" >&2

.PHONY: deps build release install uninstall test test-package test-installed docs demo examples bench bench-postgres clean

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

# The oidc users run: release, the Swift standard library, Foundation and libcrypto linked
# statically, stripped (.build/install/bin/oidc). Install it with, for yourself:
#   make install PREFIX="$$HOME/.local"
# or system-wide (build as yourself, install as root, which then builds nothing):
#   make release && sudo make install
release: deps
	@scripts/build-release.sh

install:
	@[ -x .build/install/bin/oidc ] || scripts/build-release.sh
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 .build/install/bin/oidc "$(DESTDIR)$(PREFIX)/bin/oidc"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/oidc"

# The whole suite: the package's tests, the command's tests again against the binary users install,
# the documentation check, then every example's (built, tested, README commands run); each step in
# turn, saying how long it took, so a slow run shows where its minutes went.
test:
	@for step in test-package test-installed docs examples; do \
		started=$$(date +%s); $(MAKE) --no-print-directory $$step || exit $$?; \
		echo "make test: $$step took $$(( $$(date +%s) - started )) s" >&2; \
	done

# DocC archives of OIDC and OIDCTesting without a warning; a doc comment on every public symbol.
docs: deps
	@scripts/check-docs.sh

# The interop tests need oidc-provider-mock (PyPI) on 127.0.0.1:9400, django-oauth-toolkit (PyPI,
# scripts/dot-provider.sh) on 127.0.0.1:9410, and glewlwyd (Debian) on a free
# port of 127.0.0.1, whose OIDC_GLEWLWYD_* variables `scripts/glewlwyd.sh start` prints, and a second
# glewlwyd in its HTTPS + mTLS mode (its own state directory, about 1 s to start), whose variables
# are exported renamed OIDC_GLEWLWYD_TLS_*; the OIDCPostgres tests a throw-away PostgreSQL cluster on
# 127.0.0.1; the web sign-in's browser tests Debian's chromedriver (OIDC_CHROMEDRIVER), which starts a
# headless Chromium per test (missing, those tests fail saying what to install) and keeps a
# screenshot of a failed one in .build/test-artifacts
# (OIDC_TEST_ARTIFACTS). All are stopped whatever happens.
GLEWLWYD_TLS_STATE = $(CURDIR)/.build-glewlwyd-tls
test-package: deps
	@scripts/install-deps.sh test
	@stop() { scripts/glewlwyd.sh stop > /dev/null 2>&1; GLEWLWYD_STATE_DIR=$(GLEWLWYD_TLS_STATE) scripts/glewlwyd.sh stop > /dev/null 2>&1; \
		scripts/mock-provider.sh stop 9400 > /dev/null 2>&1; scripts/dot-provider.sh stop 9410 > /dev/null 2>&1; }; \
	trap stop EXIT; trap 'exit 130' INT TERM HUP; \
	scripts/mock-provider.sh start 9400 -- --require-registration > /dev/null || exit 1; \
	glewlwyd=$$(scripts/glewlwyd.sh start) || exit 1; eval "$$glewlwyd"; \
	glewlwyd_tls=$$(GLEWLWYD_STATE_DIR=$(GLEWLWYD_TLS_STATE) scripts/glewlwyd.sh start --tls) || exit 1; \
	eval "$$(printf '%s\n' "$$glewlwyd_tls" | sed 's/^export OIDC_GLEWLWYD_/export OIDC_GLEWLWYD_TLS_/')"; \
	dot=$$(scripts/dot-provider.sh start 9410) || exit 1; eval "$$dot"; \
	$(WHO); $(FILES) OIDC_INTEROP_ISSUER=http://127.0.0.1:9400 OIDC_CHROMEDRIVER=$$(command -v chromedriver || echo chromedriver-not-installed) $(UNPRIVILEGED) scripts/postgres.sh run $(SWIFT) test $(SWIFT_BUILD_FLAGS) --skip OIDCCLITests

# The CLI tests, run against the installed build instead of the debug one; with django-oauth-toolkit
# (scripts/dot-provider.sh, a device grant without ID tokens) on 127.0.0.1:9410, glewlwyd (its tokens
# at `oidc resource-server`), requests-oauth2client (scripts/dpop-client.sh, an independent DPoP
# client) and the MCP Python SDK's server (scripts/mcp-server.sh, on 127.0.0.1:9420 and :9421: `oidc
# login --resource` from its URL alone), stopped whatever happens; Authlib's JWT bearer grant
# (scripts/jwt-bearer-server.sh install: the tests start scripts/jwt-bearer-server.py on a free port).
test-installed: release
	@scripts/install-deps.sh test
	@trap 'scripts/dot-provider.sh stop 9410 > /dev/null 2>&1; scripts/glewlwyd.sh stop > /dev/null 2>&1; scripts/mcp-server.sh stop 9420 > /dev/null 2>&1' EXIT; \
	trap 'exit 130' INT TERM HUP; \
	dot=$$(scripts/dot-provider.sh start 9410) || exit 1; eval "$$dot"; \
	mcp=$$(scripts/mcp-server.sh start 9420) || exit 1; eval "$$mcp"; \
	glewlwyd=$$(scripts/glewlwyd.sh start) || exit 1; eval "$$glewlwyd"; \
	dpop=$$(scripts/dpop-client.sh install) || exit 1; eval "$$dpop"; \
	authlib=$$(scripts/jwt-bearer-server.sh install) || exit 1; eval "$$authlib"; \
	$(WHO); $(FILES) OIDC_BINARY=$(CURDIR)/.build/install/bin/oidc $(UNPRIVILEGED) $(SWIFT) test $(SWIFT_BUILD_FLAGS) --filter OIDCCLITests

demo: release
	@scripts/demo.sh

# Start-up of `oidc token` (cached) against a minimal static Swift program: medians, peak memory, ratios;
# then OIDCResourceServer: DPoP requests against bare OpenSSL, two tasks against one (oidc-bench); a
# DPoP proof against a bare ES256 signature, and DPoP against bearer sessions (oidc-bench --dpop);
# `oidc resource-server` over HTTP (wrk) beside the in-process verification of the same token, and
# `oidc provider`'s discovery (scripts/bench-http.sh); and access tokens against jwt-kit
# (Benchmarks/access-token-bench, its own package, built in .build).
bench: release
	@scripts/install-deps.sh bench
	@OIDC=$(CURDIR)/.build/install/bin/oidc scripts/bench-startup.sh
	@$(SWIFT) run -c release -debug-info-format none oidc-bench --resource-server
	@$(SWIFT) run -c release -debug-info-format none oidc-bench --dpop
	@OIDC=$(CURDIR)/.build/install/bin/oidc scripts/bench-http.sh
	@cd Benchmarks/access-token-bench && $(SWIFT) run -c release -debug-info-format none --scratch-path $(CURDIR)/.build access-token-bench

# Every package under Examples/: built, tested, and each README's command run (one shared build);
# SwanBackend's sessions also in a throw-away PostgreSQL.
examples: deps
	@scripts/install-deps.sh test
	@scripts/postgres.sh run scripts/examples.sh

# PostgresTokenStore against a throw-away local PostgreSQL: load, save, the locked refresh path.
bench-postgres: deps
	@scripts/install-deps.sh test
	@scripts/postgres.sh run $(SWIFT) run -c release -debug-info-format none oidc-postgres-bench

clean:
	rm -rf .build .build-examples .build-postgres .build-mcp .build-dpop-client
