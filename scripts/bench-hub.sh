#!/usr/bin/env bash
# `make bench` (hub part): what the whole `podbridge run` process costs per hour of night,
# beside `podbridge analyze --capture` of the night the hub itself recorded (same signal
# code, so the ratio is what the hub spends on moving frames and on itself).
#
# 1. 600x: the hub (clock at 600x) and the virtual pod (600x) play BENCH_HOURS of night; the
#    hub records what it receives (--record). The hub's CPU time (utime+stime from
#    /proc/PID/stat) is read when the pod is plugged in and again when its night has ended,
#    its peak RSS (VmHWM) before it is stopped. Then `analyze --capture` runs on that capture
#    under /usr/bin/time (user+sys, max RSS).
# 2. 1x: the same at real time over BENCH_REAL_SECONDS (default 300) after a 20-s warm-up.
#
# The API is served on a port of the kernel's choosing (a hub or test on 8380 made the hub exit).
# CPU time, not wall time, is measured, so a machine shared with other work changes the
# figures little (cache and frequency effects remain). BENCH_BIN picks another binary
# (e.g. .build/debug/podbridge) instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/opt/swift/usr/bin:$PATH
BIN=${BENCH_BIN:-.build/release/podbridge}
HOURS=${BENCH_HOURS:-8}
REAL=${BENCH_REAL_SECONDS:-300}
STATE=$(mktemp -d /tmp/podbridge-bench-hub.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$STATE"; }
trap cleanup EXIT

if [ -z "${BENCH_BIN:-}" ]; then
  swift build -c release --product podbridge 2>&1 | grep -E "error|Build complete" || true
fi
[ -x "$BIN" ] || { echo "no $BIN (build failed?)" >&2; exit 1; }
ticks=$(getconf CLK_TCK)
cpu() { awk -v hz="$ticks" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"; }
peak() { awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# Runs one hub against one virtual pod at $1x for $2 hours of night (or $3 real seconds when
# given); prints "hub_cpu_s night_hours peak_mb analyzer_cpu_s analyzer_peak_mb pod_tx_dropped".
measure() {
  local speed=$1 hours=$2 window=${3:-}
  local dir="$STATE/x$speed"
  mkdir -p "$dir"
  cat > "$dir/config.json" <<JSON
{ "stateDirectory": "$dir", "timeZone": "UTC", "pod": { "path": "$dir/pod", "reconnectMaxSeconds": 0.1 },
  "api": { "listen": "127.0.0.1:0" } }
JSON
  local clock=()
  [ "$speed" != 1 ] && clock=(--clock-speed "$speed" --clock-start 2026-11-16T21:55:00Z)
  "$BIN" run --config "$dir/config.json" --no-console "${clock[@]}" --record "$dir/night.capture" > "$dir/hub.log" 2>&1 &
  local hub=$!; pids+=("$hub")
  sleep 2
  local start=()
  [ "$speed" != 1 ] && start=(--start 2026-11-16T22:00:00Z)
  "$BIN" simulate --speed "$speed" --seed 3 --serial BENCH001 --link "$dir/pod" --duration "$hours" "${start[@]}" \
    > "$dir/pod.log" 2>&1 &
  local pod=$!; pids+=("$pod")
  local c0 c1 t0 t1 night
  if [ -n "$window" ]; then
    sleep 20
    c0=$(cpu "$hub"); t0=$(date +%s.%N)
    sleep "$window"
    c1=$(cpu "$hub"); t1=$(date +%s.%N)
    night=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 3600 }')
    kill -TERM "$pod"; wait "$pod" 2>/dev/null || true
  else
    c0=$(cpu "$hub"); t0=$(date +%s.%N)
    wait "$pod" || true
    sleep 1
    c1=$(cpu "$hub"); t1=$(date +%s.%N)
    night=$hours
  fi
  local rss; rss=$(peak "$hub")
  kill -TERM "$hub"; wait "$hub" 2>/dev/null || true
  /usr/bin/time -f "%U %S %M" -o "$dir/analyze.time" "$BIN" analyze --capture "$dir/night.capture" > "$dir/analyze.out" 2>&1 || true
  local a; a=$(awk '{ printf "%.3f %.1f", $1 + $2, $3 / 1024 }' "$dir/analyze.time")
  # Frames the pod could not send because the hub did not read them in time (its last status line).
  local dropped; dropped=$(grep -o 'tx-dropped [0-9]*' "$dir/pod.log" | tail -n 1 | awk '{ print $2 }')
  echo "$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }') $night $rss $a ${dropped:-?}"
}

report() {
  local label=$1; shift
  read -r hub night rss acpu arss dropped <<< "$*"
  awk -v l="$label" -v h="$hub" -v n="$night" -v r="$rss" -v a="$acpu" -v ar="$arss" -v d="$dropped" 'BEGIN {
    hh = h / n; ah = a / n
    printf "%s: hub %.2f CPU-s per hour of night, peak RSS %s MB, pod frames dropped %s | analyze --capture %.2f CPU-s per hour, peak RSS %s MB | ratio %.1fx\n",
      l, hh, r, d, ah, ar, (ah > 0 ? hh / ah : 0) }'
}

echo "== hub bench: $HOURS h of night at 600x (hub and virtual pod), then analyze --capture of it"
report "600x" "$(measure 600 "$HOURS")"
echo "== hub bench: real time (1x) over $REAL s, then analyze --capture of those minutes"
report "1x  " "$(measure 1 1 "$REAL")"
