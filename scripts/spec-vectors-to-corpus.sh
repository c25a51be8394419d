#!/usr/bin/env bash
# Writes each test vector of firmware-protocol.md §10 as a fuzzer seed file in $1.
set -euo pipefail
out=${1:?corpus directory}
mkdir -p "$out"
awk '/^```vectors/{on=1; next} /^```/{on=0} on' firmware-protocol.md | while IFS=: read -r name hex; do
  escaped=""
  for byte in $hex; do escaped+="\\x$byte"; done
  printf '%b' "$escaped" > "$out/vector-$name"
done
