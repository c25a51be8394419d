#!/usr/bin/env bash
# Seeds one libFuzzer corpus per target in $1/<target> from files in the repository:
# the spec's test vectors (frames), a short capture and configurations (Fuzz/seeds),
# and the starts of Data/'s beats files and the documented vitals example.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?corpus directory}
mkdir -p "$out"/{decoder,capture,input-formats,configuration}
scripts/spec-vectors-to-corpus.sh "$out/decoder"
# Capture inputs: the fuzzer reads byte 0 as the chunk size and puts the magic before the
# rest, so a seed is a chunk byte and a capture without its 8-byte magic.
for f in Fuzz/seeds/capture/*.podcap; do
  { printf '\x3f'; tail -c +9 "$f"; } > "$out/capture/$(basename "$f")"
done
# Beats (byte 0 = 0) and vitals (byte 0 = 1) CSVs: the first 60 lines of real nights.
for f in Data/slpdb-dev/slp01a.beats.csv Data/slpdb-dev/slp04.beats.csv; do
  { printf '\x00'; head -n 60 "$f"; } > "$out/input-formats/$(basename "$f")"
done
# Stages (byte 0 = 2 modulo 3): the reference scoring `analyze --reference` reads.
{ printf '\x02'; head -n 60 Data/slpdb-dev/slp01a.stages.csv; } > "$out/input-formats/slp01a.stages.csv"
for f in Fuzz/seeds/input-formats/*.csv; do
  case "$f" in *vitals*) b='\x01' ;; *stages*) b='\x02' ;; *) b='\x00' ;; esac
  { printf "$b"; cat "$f"; } > "$out/input-formats/$(basename "$f")"
done
cp Fuzz/seeds/configuration/* "$out/configuration/"
