# The two commands a newcomer needs: `make demo` runs the product, `make test` tests it.
# Both install the Debian packages they need first (scripts/install-deps.sh).
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)

FUZZ_TIME ?= 300
# The umockdev suite runs on its own, under the preload (scripts/test-device.sh).
SWIFT_TEST_SKIP ?= --skip UmockdevTests
FUZZ_DIR := .build-fuzz

.PHONY: deps build demo test test-unit test-device test-install install uninstall bench heldout model fuzz clean deb test-deb

deps:
	@scripts/install-deps.sh

build: deps
	swift build

## The product end to end: the hub against the virtual pod (see README).
demo: deps
	@scripts/demo.sh

## Every test: the unit and integration suites, then the device suites that need umockdev.
test: deps test-unit test-device test-install test-deb

# The suites that run the hub against the virtual pod on simulated clocks run second, all
# their tests at once: their pod and hub share a PacedTimeline (docs/virtual-pod.md), which the
# pod holds until a hub streams and while the hub leaves its data unread, so a starved hub slows
# its night instead of losing it (they used to run one test at a time: 885 s in CI, 435 s now on
# an idle 2-core machine). Beside the CPU-bound suites of the first pass one still failed in CI
# (ScheduleDriverTests' DST pre-push: its rig streams nothing, so only the wall clock paces it).
CLOCKED_SUITES := HubTests|VirtualPodLinkTests|PodLinkTests
# The soak (eight nights of the real daemon) and the API suites (a hub and a virtual pod at
# up to 300x with real clients: SSE, WebSocket, schemathesis, headless chromium) run last,
# one suite per process, since beside the clocked suites (or each other) they starved the
# daemon's night on 2 cores.
# The MQTT suites each start a real mosquitto, the hub one runs a hub against the virtual pod
# at up to 200x (docs/mqtt.md): solo too, and out of the parallel pass.
MQTT_SUITES := HubMQTTTests.MQTTClientTests HubMQTTTests.MQTTHubTests
# HomeKit with aiohomekit against a hub and the virtual pod (Avahi on loopback), and the
# dashboard's setup QR code in chromium (docs/homekit.md): solo too.
HOMEKIT_SUITES := HomeKitServiceTests.HomeKitControllerTests HomeKitServiceTests.HomeKitDashboardTests
SOLO_SUITES := HubTests.HubSoakTests HubAPITests.APIControlTests HubAPITests.APIConformanceTests \
  HubAPITests.DashboardBrowserTests HubAPITests.APILiveTests HubAPITests.APILoadTests HubAPITests.APIConnectionTests \
  HubAPITests.APICORSTests $(MQTT_SUITES) $(HOMEKIT_SUITES) \
  HubAPITests.APIPresencePowerTests

test-unit:
	swift build --build-tests
	swift test --skip-build --parallel $(SWIFT_TEST_SKIP) --skip '$(CLOCKED_SUITES)|HubAPITests|HubMQTTTests.MQTTClientTests|HubMQTTTests.MQTTHubTests|HomeKitServiceTests'
	swift test --skip-build $(SWIFT_TEST_SKIP) --filter '$(CLOCKED_SUITES)' --skip 'HubSoakTests|HubMQTTTests'
	set -e; for suite in $(SOLO_SUITES); do swift test --skip-build $(SWIFT_TEST_SKIP) --filter "$$suite"; done

test-device:
	scripts/test-device.sh

## `make install` into a staging root and out again (scripts/test-install.sh).
test-install:
	scripts/test-install.sh

## The Debian package, .build-deb/podbridge_<version>_<arch>.deb (scripts/build-deb.sh,
## docs/install.md): the static release build, laid out by scripts/install.sh.
deb:
	@scripts/install-deps.sh --deb
	scripts/build-deb.sh

## The package as users install it, as root: this commit's and the previous one's built in a
## clone (.build-deb/clone), lintian, apt-get install into a fresh debootstrap chroot, upgrade
## from the previous commit's package, remove, purge (scripts/test-deb.sh).
test-deb: deps
	scripts/test-deb.sh

## The hub on this machine, as root: the binary (Swift runtime linked in) to $(PREFIX)/bin,
## the systemd unit and the udev rule, then systemd and udev reloaded (scripts/install.sh;
## PREFIX, SYSCONFDIR and DESTDIR as usual). `make uninstall` removes them again.
install:
	@scripts/install-deps.sh --hub
	scripts/install.sh

uninstall:
	scripts/install.sh --uninstall

## Figures: protocol throughput, analyzer accuracy and speed, store timings; API latency,
## daemon CPU and memory with live clients (scripts/bench-api.sh); the hub's whole-process CPU
## per hour of night at 600x and 1x beside `analyze --capture` of the same night (scripts/bench-hub.sh).
bench: deps
	swift build -c release --product podbridge-bench
	swift build -c release --product podbridge
	.build/release/podbridge-bench $(BENCH_ARGS)
	scripts/bench-api.sh
	scripts/bench-hub.sh

## The shipped staging models on scored nights the project never saw: HELDOUT names one or
## more folders in Data/'s layouts (slpdb beats and stages, sleep-accel's PhysioNet files).
heldout: deps
	@test -n "$(HELDOUT)" || { echo "usage: make heldout HELDOUT='folder [folder ...]'"; exit 2; }
	swift build -c release --product podbridge-bench
	.build/release/podbridge-bench $(foreach d,$(HELDOUT),--held-out $(d))

## Refit the staging model on the labelled nights in Data/ and write the shipped constants
## (Sources/SleepAnalysis/DefaultStagingModel.swift); a test keeps them equal to a fresh fit.
model: deps
	swift build --product podbridge-bench
	.build/debug/podbridge-bench --write-model Sources/SleepAnalysis/DefaultStagingModel.swift

## libFuzzer on every parser of outside input, FUZZ_TIME seconds each (see README):
## frames, capture files, the beats and vitals CSVs, the hub's configuration.
FUZZ_FLAGS := -sanitize=fuzzer,address -parse-as-library -O -package-name podbridge -I $(FUZZ_DIR) -L $(FUZZ_DIR)
FUZZ_TARGETS := decoder capture input-formats configuration
# Module sources straight from Sources/, as static libraries the targets link.
fuzz-module = swiftc $(FUZZ_FLAGS) -module-name $(1) -emit-module -emit-module-path $(FUZZ_DIR)/$(1).swiftmodule \
  -emit-library -static -o $(FUZZ_DIR)/lib$(1).a $$(find Sources/$(1) -name '*.swift' | sort)
# The linker's harmless notes about the fuzzer runtime's symbols are filtered out.
fuzz-link = swiftc $(FUZZ_FLAGS) $(2) -o $(FUZZ_DIR)/$(1)-fuzzer 2>&1 | { grep -v "Cannot export local symbol" || true; }; \
  test -x $(FUZZ_DIR)/$(1)-fuzzer

fuzz: deps
	@mkdir -p $(FUZZ_DIR)
	$(call fuzz-module,SleepDomain)
	$(call fuzz-module,PodProtocol)
	$(call fuzz-module,SleepAnalysis)
	$(call fuzz-module,SleepSchedule)
	swiftc $(FUZZ_FLAGS) -module-name PodAnalysis -emit-module -emit-module-path $(FUZZ_DIR)/PodAnalysis.swiftmodule \
	  -emit-library -static -o $(FUZZ_DIR)/libPodAnalysis.a Sources/PodAnalysis/*.swift
	$(call fuzz-link,decoder,-lPodProtocol -lSleepDomain Fuzz/DecoderFuzzer.swift)
	$(call fuzz-link,capture,-lPodAnalysis -lSleepAnalysis -lPodProtocol -lSleepDomain Fuzz/CaptureFuzzer.swift)
	$(call fuzz-link,input-formats,-lSleepAnalysis -lSleepDomain Fuzz/InputFormatsFuzzer.swift)
	$(call fuzz-link,configuration,-lSleepSchedule -lSleepDomain Fuzz/ConfigurationFuzzer.swift Sources/Hub/HubConfiguration.swift Sources/Hub/ListenAddress.swift Sources/Hub/WebOrigin.swift)
	scripts/fuzz-corpus.sh $(FUZZ_DIR)/corpus
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t ($(FUZZ_TIME) s)"; \
	  mkdir -p $(FUZZ_DIR)/artifacts/$$t; \
	  $(FUZZ_DIR)/$$t-fuzzer -max_total_time=$(FUZZ_TIME) -max_len=8192 -timeout=20 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t/ $(FUZZ_DIR)/corpus/$$t \
	    > $(FUZZ_DIR)/$$t.log 2>&1; status=$$?; \
	  grep -E "stat::number_of_executed_units|stat::peak_rss|Done|ERROR|SUMMARY|crash|Test unit written" $(FUZZ_DIR)/$$t.log; \
	  if [ $$status -ne 0 ]; then echo "fuzz $$t FAILED (log: $(FUZZ_DIR)/$$t.log)"; tail -40 $(FUZZ_DIR)/$$t.log; exit 1; fi; \
	done

clean:
	rm -rf .build $(FUZZ_DIR) .build-deb
