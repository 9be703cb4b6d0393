#!/usr/bin/env bash
# Start-up benchmark of the hot path of scripts and kubectl: `oidc token` with a valid cached token.
#
#   scripts/bench-startup.sh [RUNS]        (default 40 runs per command, after 5 warm-up runs)
#   OIDC=/usr/local/bin/oidc scripts/bench-startup.sh    to measure an installed binary
#
# Prints, from one run: the median wall time (hyperfine) and the median peak memory (maximum
# resident set size, /usr/bin/time) of
#   - `oidc token` reading a cached login,
#   - `oidc token --output exec-credential` as kubectl runs it (KUBERNETES_EXEC_INFO set),
#   - `oidc --version`,
#   - a minimal Swift program linked like oidc (static Swift standard library and Foundation) that
#     reads and decodes the same stored-login file and prints the token (Benchmarks/startup-baseline),
# and the ratios of `oidc token` to that program. With --check, exits 1 when a ratio is above 1.5.
# Without OIDC=, it measures the binary `make install` installs (scripts/build-release.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
if [ "${1:-}" = "--check" ]; then check=true; shift; fi
runs=${1:-40}

if ! command -v hyperfine >/dev/null 2>&1 || [ ! -x /usr/bin/time ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "bench-startup: installing hyperfine and time (Debian packages)" >&2
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq hyperfine time >/dev/null
fi

if [ -z "${OIDC:-}" ]; then
    scripts/build-release.sh >&2
    OIDC=$PWD/.build/install/bin/oidc
fi
baseline=.build/bench/startup-baseline
mkdir -p .build/bench
if [ ! -x "$baseline" ] || [ Benchmarks/startup-baseline/main.swift -nt "$baseline" ]; then
    echo "bench-startup: building the baseline (swiftc -O -static-stdlib)" >&2
    swiftc -O -static-stdlib Benchmarks/startup-baseline/main.swift -o "$baseline"
    strip "$baseline"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config
unset OIDC_STORE OIDC_PROFILE OIDC_FAST_PATH
# A login as `oidc login` leaves it: access, refresh and ID tokens, valid for an hour.
token=$(head -c 48 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
printf '{"access_token":"%s","token_type":"Bearer","expires_in":3600,"refresh_token":"r-%s","scope":"openid offline_access"}' \
    "$token" "$token" | "$OIDC" inject --issuer https://idp.example --client-id bench --token-endpoint https://idp.example/token \
    --token-response - --profile bench >/dev/null
store_file=$(ls "$XDG_STATE_HOME"/oidc/*.json)
[ "$("$OIDC" token --profile bench)" = "$token" ] || { echo "bench-startup: oidc token did not print the cached token" >&2; exit 1; }
[ "$("$baseline" "$store_file")" = "$token" ] || { echo "bench-startup: the baseline did not print the token" >&2; exit 1; }
# What is measured is the shortcut that answers cached tokens (it exits 98 if it did not answer).
OIDC_FAST_PATH=require "$OIDC" token --profile bench >/dev/null
export KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}'
OIDC_FAST_PATH=require "$OIDC" token --profile bench --output exec-credential --token-type access >/dev/null

hyperfine -N --warmup 5 --runs "$runs" --export-json "$work/times.json" --style none \
    -n "oidc token" "$OIDC token --profile bench" \
    -n "exec-credential" "$OIDC token --profile bench --output exec-credential --token-type access" \
    -n "oidc --version" "$OIDC --version" \
    -n "baseline" "$baseline $store_file" >/dev/null

# Peak memory: the median over the same number of runs.
peak() {
    for _ in $(seq "$runs"); do /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
memory_token=$(peak "$OIDC" token --profile bench)
memory_exec=$(peak "$OIDC" token --profile bench --output exec-credential --token-type access)
memory_version=$(peak "$OIDC" --version)
memory_baseline=$(peak "$baseline" "$store_file")

python3 - "$work/times.json" "$memory_token" "$memory_exec" "$memory_version" "$memory_baseline" "$check" "$OIDC" <<'PY'
import json, os, statistics, sys
names = ["oidc token", "exec-credential", "oidc --version", "baseline"]
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
memory = dict(zip(names, map(int, sys.argv[2:6])))
check, binary = sys.argv[6] == "true", sys.argv[7]
median = {name: statistics.median(r["times"]) * 1000 for name, r in results.items()}
print(f"binary: {binary} ({os.path.getsize(binary) / 1e6:.1f} MB); {len(results['baseline']['times'])} runs each")
print(f"{'command':<16} {'median ms':>10} {'min ms':>8} {'peak RSS MiB':>13}")
for name in names:
    print(f"{name:<16} {median[name]:>10.2f} {min(results[name]['times']) * 1000:>8.2f} {memory[name] / 1024:>13.1f}")
ratios = []
for name in ["oidc token", "exec-credential"]:
    time_ratio, memory_ratio = median[name] / median["baseline"], memory[name] / memory["baseline"]
    ratios += [time_ratio, memory_ratio]
    print(f"{name} / baseline: time {time_ratio:.2f}x, memory {memory_ratio:.2f}x (target: at most 1.5x each)")
if check and max(ratios) > 1.5:
    sys.exit(1)
PY
