# The two entry points of the README: `make demo` (the main job) and `make test` (the whole suite).
SWIFT ?= swift

.PHONY: deps build test demo clean

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

test: deps
	$(SWIFT) test

demo: deps
	@scripts/demo.sh

clean:
	rm -rf .build
