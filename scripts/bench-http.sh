#!/usr/bin/env bash
# HTTP throughput of the kit's servers (wrk), each beside what it is measured against, from one run:
#
#   - `oidc resource-server`: valid-token requests per second (50 keep-alive connections) beside the
#     in-process rate of the same verification of the same token, on one task
#     (`oidc-bench --in-process-verify`: the same issuer keys, audience and resource), and their
#     ratio (goal >= 0.5); the CPU microseconds per request of both sides and their ratio (less
#     sensitive than rates to the machine's other load); the 401 path (no token) for scale;
#   - `oidc provider`: discovery requests per second and mean latency (10 connections; goal
#     >= 10,400/s, ten times the 1,040/s of issue 35).
#
# Rounds alternate server and in-process; medians. The load average before the run is printed:
# on a busy machine both sides of a ratio lose, not always alike.
#
#   scripts/bench-http.sh [SECONDS] [ROUNDS]      (default 5 s per measurement, 3 rounds)
#   OIDC=/usr/local/bin/oidc scripts/bench-http.sh    to measure an installed binary
#   OIDC_BENCH=path/to/oidc-bench                     a release oidc-bench already built
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
rounds=${2:-3}

if ! command -v wrk >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "bench-http: installing wrk, jq and curl (Debian packages)" >&2
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq wrk jq curl >/dev/null
fi
if [ -z "${OIDC:-}" ]; then
    scripts/build-release.sh >&2
    OIDC=$PWD/.build/install/bin/oidc
fi
if [ -z "${OIDC_BENCH:-}" ]; then
    swift build -c release -debug-info-format none --product oidc-bench >&2
    OIDC_BENCH=$(swift build -c release -debug-info-format none --show-bin-path)/oidc-bench
fi
bench=$OIDC_BENCH

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Starts a server whose first stdout line is its URL; sets $url.
start() {
    local name=$1; shift
    "$@" >"$work/$name.url" 2>/dev/null &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$work/$name.url" ] && break; sleep 0.1; done
    url=$(head -n1 "$work/$name.url")
    [ -n "$url" ] || { echo "bench-http: $name did not start" >&2; exit 1; }
    server_pid=$!
}

# The CPU seconds (user + system) a process has used (Linux /proc).
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.4f", ($14 + $15) / hz }' "/proc/$1/stat"; }

# Requests per second, completed requests and mean latency (wrk).
run_wrk() {
    local connections=$1; shift
    wrk -t1 -c"$connections" -d"${seconds}s" "$@" >"$work/wrk.out"
    rate=$(awk '/Requests\/sec/ { print $2 }' "$work/wrk.out")
    count=$(awk '/requests in/ { print $1 }' "$work/wrk.out")
    latency=$(awk '/Latency/ { print $2; exit }' "$work/wrk.out")
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

audience=https://api.bench.example
start provider "$OIDC" provider --port 0 --client-id bench --client-secret benchsecret
issuer=$url
provider_pid=$server_pid
token=$(curl -fsS -u bench:benchsecret -d grant_type=client_credentials -d "resource=$audience" -d scope=read "$issuer/token" | jq -r .access_token)
printf '%s' "$token" >"$work/token"
curl -fsS "$issuer/jwks" >"$work/jwks.json"
start resource "$OIDC" resource-server --issuer "$issuer" --audience "$audience" --port 0
resource=$url
resource_pid=$server_pid
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$resource/bench")" = 200 ] || {
    echo "bench-http: the resource server refused the benchmark token" >&2
    exit 1
}

load=$(cut -d' ' -f1 /proc/loadavg)
echo "HTTP servers, $rounds interleaved rounds of $seconds s, medians; $(nproc) cores, load average $load before; $(wrk --version 2>&1 | head -n1 | cut -d' ' -f1-2)"
: >"$work/server" >"$work/inprocess" >"$work/ratio" >"$work/scpu" >"$work/icpu" >"$work/cpuratio" >"$work/refused" >"$work/discovery" >"$work/dlatency"
for _ in $(seq "$rounds"); do
    before=$(cpu_seconds "$resource_pid")
    run_wrk 50 -H "Authorization: Bearer $token" "$resource/bench"
    after=$(cpu_seconds "$resource_pid")
    server_cpu=$(awk -v a="$before" -v b="$after" -v n="$count" 'BEGIN { printf "%.1f", (b - a) / n * 1e6 }')
    server=$rate
    read -r inprocess inprocess_cpu < <("$bench" --in-process-verify --issuer "$issuer" --audience "$audience" --resource "$resource" \
        --jwks "$work/jwks.json" --token-file "$work/token" --seconds "$seconds")
    echo "$server" >>"$work/server"
    echo "$inprocess" >>"$work/inprocess"
    awk -v s="$server" -v i="$inprocess" 'BEGIN { printf "%.3f\n", s / i }' >>"$work/ratio"
    echo "$server_cpu" >>"$work/scpu"
    echo "$inprocess_cpu" >>"$work/icpu"
    awk -v s="$server_cpu" -v i="$inprocess_cpu" 'BEGIN { printf "%.3f\n", i / s }' >>"$work/cpuratio"
    run_wrk 50 "$resource/bench"
    echo "$rate" >>"$work/refused"
    run_wrk 10 "$issuer/.well-known/openid-configuration"
    echo "$rate" >>"$work/discovery"
    echo "$latency" >>"$work/dlatency"
done
echo "oidc resource-server, valid bearer token (RS256), 50 connections:"
printf '  server %8.0f req/s   in-process (1 task) %8.0f /s   server/in-process %s   (goal >= 0.5)\n' \
    "$(median <"$work/server")" "$(median <"$work/inprocess")" "$(median <"$work/ratio")"
printf '  CPU us per request: server %s, in-process %s; in-process/server %s\n' \
    "$(median <"$work/scpu")" "$(median <"$work/icpu")" "$(median <"$work/cpuratio")"
printf '  401 (no token) %8.0f req/s\n' "$(median <"$work/refused")"
printf 'oidc provider, discovery, 10 connections: %8.0f req/s, mean latency per round %s (goal >= 10400 req/s)\n' \
    "$(median <"$work/discovery")" "$(paste -sd' ' "$work/dlatency")"
