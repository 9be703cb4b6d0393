#!/usr/bin/env bash
# The documentation check: builds the DocC archives of OIDC, OIDCTesting, OIDCPostgres, OIDCResourceServer, OIDCHummingbird and OIDCOpenAPI (their
# catalogs are Sources/<module>/<module>.docc) and fails when
#   (a) the build prints any warning (an unresolved ``link``, an undocumented parameter, a compiler
#       warning), or
#   (b) a public symbol of either module has no doc comment of its own (a comment inherited from
#       the standard library's protocols does not count; one from our own protocols does).
# Ends with one line: symbols documented / total, warnings. Archives land in
# .build/plugins/Swift-DocC/outputs. Extra arguments go to `swift package generate-documentation`.
#
# --warnings-as-errors is not passed: it stops at the first target with a warning, hiding the
# other's. The symbols checked are the ones the plugin extracted for the archives (public and open,
# extension blocks included), so one build answers both questions.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
started=$SECONDS

# Symbol graphs of an earlier run must not stand in for this one's.
rm -rf .build/*/extracted-symbols/*/OIDC .build/*/extracted-symbols/*/OIDCTesting .build/*/extracted-symbols/*/OIDCPostgres .build/*/extracted-symbols/*/OIDCResourceServer .build/*/extracted-symbols/*/OIDCHummingbird .build/*/extracted-symbols/*/OIDCOpenAPI .build/*/extracted-symbols/*/OIDCVapor

# DocC copies its renderer's files (the toolchain's share/docc/render) into every archive, keeping
# their owner: as an ordinary user, with a toolchain that root installed, the copy stops at the first
# file (chown is refused) and every page then fails with "The file doesn't exist". So the renderer is
# copied into the build folder once, as this user, and DocC is pointed at the copy (DOCC_HTML_DIR).
if [ -z "${DOCC_HTML_DIR:-}" ]; then
    render="$(dirname "$(readlink -f "$(command -v swift)")")/../share/docc/render"
    if [ -d "$render" ] && [ "$(stat -c %u "$render")" != "$(id -u)" ]; then
        copy=.build/docc-render
        if [ ! -f "$copy/index.html" ] || [ "$render/index.html" -nt "$copy/index.html" ]; then
            rm -rf "$copy" && mkdir -p .build && cp -R "$render" "$copy"
        fi
        export DOCC_HTML_DIR="$PWD/$copy"
    fi
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
swift package generate-documentation --target OIDC --target OIDCTesting --target OIDCPostgres --target OIDCResourceServer --target OIDCHummingbird --target OIDCVapor --target OIDCOpenAPI "$@" >"$log" 2>&1 || status=$?

# DocC prints `warning: …` followed by the source excerpt; compilers print `path:line:col: warning: …`.
# SwiftPM's note that a dependency's checkout holds a file its manifest does not declare (Hummingbird's
# swift-distributed-tracing ships a CMakeLists.txt) is about someone else's package, not these docs.
ours_only() { grep -vE "^warning: '[^']+': found [0-9]+ file\(s\) which are unhandled" "$log"; }
warnings=$(ours_only | grep -cE '(^|: )warning:' || true)
if [ "$warnings" -gt 0 ] || [ "$status" -ne 0 ]; then
    ours_only | grep -E -A8 '(^|: )(warning|error):' >&2 || tail -40 "$log" >&2
fi
if [ "$status" -ne 0 ]; then
    echo "check-docs: swift package generate-documentation failed (exit $status)" >&2
fi

coverage=0
documented=$(python3 - "$root" <<'PYTHON'
import glob, json, sys, urllib.parse

root = sys.argv[1].rstrip("/") + "/Sources/"
ours = {"OIDC", "OIDCTesting", "OIDCPostgres", "OIDCResourceServer", "OIDCHummingbird", "OIDCVapor", "OIDCOpenAPI"}
total, missing = 0, []
for module in sorted(ours):
    files = glob.glob(f".build/*/extracted-symbols/*/{module}/{module}.symbols.json")
    files += glob.glob(f".build/*/extracted-symbols/*/{module}/{module}@*.symbols.json")
    if not files:
        print(f"check-docs: no symbol graph for {module}; did the documentation build run?", file=sys.stderr)
        sys.exit(2)
    for path in files:
        for symbol in json.load(open(path))["symbols"]:
            uri = urllib.parse.unquote(symbol.get("location", {}).get("uri", ""))
            # Only symbols written in our sources: what the compiler synthesizes, or inherits from
            # another module's protocol extensions, has no location there and cannot be documented.
            if not uri.startswith("file://" + root):
                continue
            total += 1
            comment = symbol.get("docComment")
            if comment and comment.get("module", module) in ours and any(l["text"].strip() for l in comment["lines"]):
                continue
            where = "Sources/" + uri[len("file://" + root):] + ":" + str(symbol["location"]["position"]["line"] + 1)
            missing.append(f"{where}: {'.'.join(symbol['pathComponents'])} ({symbol['kind']['displayName']})")
for line in sorted(missing):
    print("undocumented:", line, file=sys.stderr)
print(f"{total - len(missing)}/{total}")
sys.exit(1 if missing else 0)
PYTHON
) || coverage=$?

elapsed=$((SECONDS - started))
echo "check-docs: ${documented} public symbols documented, ${warnings} warnings ($elapsed s)"
if [ "$status" -ne 0 ] || [ "$warnings" -gt 0 ] || [ "$coverage" -ne 0 ]; then
    exit 1
fi
