#!/usr/bin/env bash
# The committed tree holds no merge-conflict markers and no whitespace errors (trailing blanks, a
# blank line at the end of a file, a space before a tab in the indent): `git diff --check` of HEAD
# against the empty tree, which sees every committed file, conflict markers included. CI runs it
# first (.ci/run), so a bad merge cannot land; run it yourself before you push.
set -euo pipefail
cd "$(dirname "$0")/.."
empty=$(git hash-object -t tree /dev/null)
if ! problems=$(git -c core.whitespace=blank-at-eol,blank-at-eof,space-before-tab diff --check "$empty" HEAD); then
    printf '%s\n' "$problems" >&2
    echo "check-tree: the committed tree has merge-conflict markers or whitespace errors (above); fix them and commit" >&2
    exit 1
fi
echo "check-tree: no conflict markers or whitespace errors in $(git ls-files | wc -l) committed files" >&2
