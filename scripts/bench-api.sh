#!/usr/bin/env bash
# `make bench` (API part): latency of /api/v1/live and /api/v1/nights under load (wrk), and
# the daemon's CPU and memory at 1× with 10 live-stream clients attached.
#
# 1. A hub (release build) with the virtual pod plays BENCH_NIGHTS nights at high speed, so
#    the store holds nights to list.
# 2. While the hub streams a night at 1× (real time), 10 SSE clients are attached; after a
#    warm-up the daemon's CPU time and resident memory are read from /proc over BENCH_SECONDS.
# 3. wrk loads /api/v1/live and /api/v1/nights (4 connections, 2 threads, 10 s each) and
#    prints p50/p99 latency.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
BIN=.build/release/podbridge
SECONDS_CPU=${BENCH_SECONDS:-60}
NIGHTS=${BENCH_NIGHTS:-2}
PORT=${BENCH_PORT:-18380}
STATE=$(mktemp -d /tmp/podbridge-bench-api.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$STATE"; }
trap cleanup EXIT

swift build -c release --product podbridge 2>&1 | grep -E "error|Build complete" || true
[ -x "$BIN" ] || { echo "build failed" >&2; exit 1; }
cat > "$STATE/config.json" <<JSON
{ "stateDirectory": "$STATE", "timeZone": "UTC", "pod": { "path": "$STATE/pod", "reconnectMaxSeconds": 1 },
  "api": { "listen": "127.0.0.1:$PORT" } }
JSON

echo "== API bench: filling the store ($NIGHTS nights at 1200x)"
"$BIN" run --config "$STATE/config.json" --no-console --clock-speed 1200 --clock-start 2026-11-16T21:00:00Z > "$STATE/hub1.log" 2>&1 &
HUB=$!; pids+=("$HUB")
for n in $(seq 1 "$NIGHTS"); do
  "$BIN" simulate --speed 1200 --seed "$n" --serial BENCH001 --link "$STATE/pod" --duration 8 --out-of-bed 30 > /dev/null 2>&1
  sleep 2
done
kill -TERM "$HUB"; wait "$HUB" || true

echo "== API bench: the daemon at 1x with 10 live clients (${SECONDS_CPU} s)"
"$BIN" run --config "$STATE/config.json" --no-console > "$STATE/hub2.log" 2>&1 &
HUB=$!; pids+=("$HUB")
"$BIN" simulate --speed 1 --seed 9 --serial BENCH001 --link "$STATE/pod" --duration 8 > /dev/null 2>&1 &
pids+=("$!")
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null && break; sleep 0.3; done
for i in $(seq 1 10); do curl -sN "http://127.0.0.1:$PORT/api/v1/live/events" > "$STATE/client-$i.log" 2>/dev/null & pids+=("$!"); done
sleep 15
ticks=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$HUB/stat"; }
c0=$(cpu); t0=$(date +%s.%N)
sleep "$SECONDS_CPU"
c1=$(cpu); t1=$(date +%s.%N)
rss=$(awk '/VmRSS/ { print $2 }' "/proc/$HUB/status")
messages=$(cat "$STATE"/client-*.log | grep -c '^data: ' || true)
awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v hz="$ticks" -v rss="$rss" -v m="$messages" 'BEGIN {
  printf "daemon at 1x, 10 SSE clients: CPU %.2f %% of one core over %.0f s (goal < 0.5 %%), RSS %.1f MB (goal < 60 MB); %d messages streamed\n",
    100 * (c1 - c0) / hz / (t1 - t0), t1 - t0, rss / 1024, m }'

echo "== API bench: latency under load (wrk, 2 threads, 4 connections, 10 s each)"
for path in /api/v1/live /api/v1/nights; do
  out=$(wrk -t2 -c4 -d10s --latency "http://127.0.0.1:$PORT$path")
  p50=$(awk '$1 == "50%" { print $2 }' <<< "$out"); p99=$(awk '$1 == "99%" { print $2 }' <<< "$out")
  rps=$(awk '/Requests\/sec/ { print $2 }' <<< "$out"); errors=$(grep -c "Non-2xx" <<< "$out" || true)
  echo "GET $path: p50 $p50, p99 $p99, $rps requests/s (non-2xx lines: $errors)"
done
