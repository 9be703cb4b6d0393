#!/usr/bin/env bash
# The oidc users install (`make install`, `make demo`): a release build with the Swift standard
# library, Foundation and OpenSSL's libcrypto linked statically, stripped, in .build/install/bin.
#
# Static libcrypto: `oidc token` then loads no shared library but libc's and libstdc++'s, which
# takes about a millisecond and 1.4 MiB off every call (scripts/bench-startup.sh). It is done by
# pointing pkg-config at a libcrypto.pc whose only library directory holds libcrypto.a; where there
# is no libcrypto.a, the shared library is used as in a debug build.
set -euo pipefail
cd "$(dirname "$0")/.."

libdir=$(pkg-config --variable=libdir libcrypto)
if [ -f "$libdir/libcrypto.a" ]; then
    static=$PWD/.build/static-libcrypto
    mkdir -p "$static/lib"
    ln -sf "$libdir/libcrypto.a" "$static/lib/libcrypto.a"
    cat >"$static/libcrypto.pc" <<PC
Name: OpenSSL-libcrypto
Description: OpenSSL's libcrypto, linked statically into oidc
Version: $(pkg-config --modversion libcrypto)
Libs: -L$static/lib -lcrypto -ldl -pthread
Cflags: $(pkg-config --cflags libcrypto)
PC
    export PKG_CONFIG_PATH=$static${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
fi

swift build -c release --static-swift-stdlib --product oidc
mkdir -p .build/install/bin
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
strip -o .build/install/bin/oidc.tmp "$bin/oidc"
mv -f .build/install/bin/oidc.tmp .build/install/bin/oidc
