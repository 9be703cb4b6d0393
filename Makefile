# The two entry points of the README: `make demo` (the main job) and `make test` (the whole suite).
SWIFT ?= swift

.PHONY: deps build test test-package docs demo examples clean

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

# The whole suite: the package's tests, the documentation check, then every example's (built,
# tested, README commands run).
test: test-package docs examples

# DocC archives of OIDC and OIDCTesting without a warning; a doc comment on every public symbol.
docs: deps
	@scripts/check-docs.sh

# The interop tests need oidc-provider-mock (PyPI) on 127.0.0.1:9400; it is stopped whatever happens.
test-package: deps
	@scripts/mock-provider.sh start 9400 -- --require-registration > /dev/null
	@OIDC_INTEROP_ISSUER=http://127.0.0.1:9400 $(SWIFT) test; status=$$?; scripts/mock-provider.sh stop 9400 > /dev/null 2>&1; exit $$status

demo: deps
	@scripts/demo.sh

# Every package under Examples/: built, tested, and each README's command run (one shared build).
examples: deps
	@scripts/examples.sh

clean:
	rm -rf .build .build-examples
