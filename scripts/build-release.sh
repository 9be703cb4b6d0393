#!/usr/bin/env bash
# The oidc users install (`make install`, `make demo`): a release build with the Swift standard
# library and Foundation linked statically, stripped, in .build/install/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product oidc
mkdir -p .build/install/bin
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
strip -o .build/install/bin/oidc.tmp "$bin/oidc"
mv -f .build/install/bin/oidc.tmp .build/install/bin/oidc
