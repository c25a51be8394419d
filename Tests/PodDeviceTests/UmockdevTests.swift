// Every test that uses a umockdev testbed lives under this one serialized suite: the
// testbed is process-global state. scripts/test-device.sh runs it alone, under the preload.
import Testing

@Suite("umockdev", .serialized, .enabled(if: UmockdevEnvironment.preloaded, "needs libumockdev-preload (scripts/test-device.sh)"))
struct UmockdevTests {}
