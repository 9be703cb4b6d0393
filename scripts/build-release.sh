#!/usr/bin/env bash
# The oidc users install (`make install`, `make demo`): a release build with the Swift standard
# library, Foundation and OpenSSL's libcrypto linked statically, stripped, in .build/install/bin.
#
# Static libcrypto: `oidc token` then loads no shared library but libc, libm, libstdc++ and
# libgcc_s, which takes about a millisecond and 1.4 MiB off every call (scripts/bench-startup.sh).
# It is done by pointing pkg-config at a libcrypto.pc whose only library directory holds
# libcrypto.a; where there is no libcrypto.a, the shared library is used, and this says so.
# The price: an OpenSSL security update reaches the installed oidc only when it is built again
# (`make release install` after `apt-get upgrade libssl3`).
#
# No $ORIGIN in the run path (--disable-local-rpath): the installed binary must not look for its
# libraries, or for libjwt when `oidc mint` loads it, in the directory it is installed in.
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
Libs: -L$static/lib $(pkg-config --static --libs-only-l libcrypto) -pthread
Cflags: $(pkg-config --cflags libcrypto)
PC
    export PKG_CONFIG_PATH=$static${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
else
    echo "build-release: no libcrypto.a in $libdir: linking the shared libcrypto (oidc token starts about 1 ms slower)" >&2
fi

# No debug information: the binary is stripped below anyway, and the build takes less without it.
flags=(-c release --static-swift-stdlib --disable-local-rpath -debug-info-format none)
swift build "${flags[@]}" --product oidc
mkdir -p .build/install/bin
bin=$(swift build "${flags[@]}" --show-bin-path)
if readelf -d "$bin/oidc" | grep -q 'NEEDED.*libcrypto'; then
    echo "build-release: note: oidc links the shared libcrypto" >&2
fi
strip -o .build/install/bin/oidc.tmp "$bin/oidc"
mv -f .build/install/bin/oidc.tmp .build/install/bin/oidc
