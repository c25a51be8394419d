# The two commands a newcomer needs: `make demo` runs the product, `make test` tests it.
# Both install the Debian packages they need first (scripts/install-deps.sh).
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

FUZZ_TIME ?= 300
# The umockdev suite runs on its own, under the preload (scripts/test-device.sh).
SWIFT_TEST_SKIP ?= --skip UmockdevTests
FUZZ_DIR := .build-fuzz

.PHONY: deps build demo test test-unit test-device bench fuzz clean

deps:
	@scripts/install-deps.sh

build: deps
	swift build

## The product end to end: the hub against the virtual pod (see README).
demo: deps
	@scripts/demo.sh

## Every test: the unit and integration suites, then the device suites that need umockdev.
test: deps test-unit test-device

test-unit:
	swift build --build-tests
	swift test --skip-build --parallel $(SWIFT_TEST_SKIP)

test-device:
	scripts/test-device.sh

## Figures: protocol throughput, analyzer accuracy and speed, store timings; API latency,
## daemon CPU and memory with live clients (scripts/bench-api.sh).
bench: deps
	swift build -c release --product podbridge-bench
	.build/release/podbridge-bench $(BENCH_ARGS)
	scripts/bench-api.sh

## libFuzzer on the frame decoder for FUZZ_TIME seconds (seeded with the spec's vectors).
fuzz: deps
	@mkdir -p $(FUZZ_DIR)/corpus
	swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name PodProtocol \
	  -emit-module -emit-module-path $(FUZZ_DIR)/PodProtocol.swiftmodule \
	  -emit-library -static -o $(FUZZ_DIR)/libPodProtocol.a Sources/PodProtocol/*.swift
	swiftc -sanitize=fuzzer,address -parse-as-library -O -I $(FUZZ_DIR) -L $(FUZZ_DIR) -lPodProtocol \
	  Fuzz/DecoderFuzzer.swift -o $(FUZZ_DIR)/decoder-fuzzer 2>&1 | grep -v "Cannot export local symbol" || true
	scripts/spec-vectors-to-corpus.sh $(FUZZ_DIR)/corpus
	$(FUZZ_DIR)/decoder-fuzzer -max_total_time=$(FUZZ_TIME) -max_len=4096 -print_final_stats=1 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus 2>&1 | grep -E "stat::|Done|ERROR|SUMMARY|crash" ; \
	  test $${PIPESTATUS[0]} -eq 0

clean:
	rm -rf .build $(FUZZ_DIR)
