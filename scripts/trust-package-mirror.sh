#!/usr/bin/env bash
# Lets SwiftPM fetch packages as an ordinary user on a machine whose git rewrites github.com to a
# local mirror that another user (root) owns (`url.<dir>.insteadOf` in git's configuration, as on
# the project's build machines). git refuses a repository of another user ("detected dubious
# ownership"), and the package resolution then fails; so each mirrored repository is added to
# *your* git configuration as a `safe.directory`, one by one (never `*`), and only when git refuses
# it. Nothing to do as the mirror's owner, or without a local mirror.
set -euo pipefail

mirrors=$(git config --get-regexp '^url\..*\.insteadof$' 2>/dev/null | sed -n 's/^url\.\(\/[^ ]*\)\.insteadof .*/\1/p' | sort -u)
[ -n "$mirrors" ] || exit 0
me=$(id -u)
trusted=$(git config --global --get-all safe.directory 2>/dev/null || true)
added=0
for mirror in $mirrors; do
    [ -d "$mirror" ] && [ "$(stat -c %u "$mirror")" != "$me" ] || continue
    while IFS= read -r repository; do
        repository=${repository%/}
        grep -qxF "$repository" <<<"$trusted" && continue
        # What SwiftPM's clone does: reading the repository by the path it is named by (git checks a
        # symlinked repository's ownership under its link's name, which `git -C` would resolve).
        git ls-remote "$repository" >/dev/null 2>&1 && continue
        git config --global --add safe.directory "$repository"
        added=$((added + 1))
    done < <(find "$mirror" -mindepth 2 -maxdepth 2 \( -type d -o -type l \) -name '*.git' 2>/dev/null | sort)
done
[ "$added" -eq 0 ] || echo "trust-package-mirror: trusted $added repositories of the package mirror ($mirrors, owned by another user) in your git configuration (safe.directory)" >&2
