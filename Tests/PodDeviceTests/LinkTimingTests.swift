import Testing
@testable import PodDevice

@Suite("reconnect backoff")
struct LinkTimingTests {
    let timing = LinkTiming(reconnectInitialDelay: .milliseconds(500), reconnectMaxDelay: .seconds(30), jitter: 0.2)

    @Test("doubles per attempt from the initial delay and stops at the cap")
    func exponentialCapped() {
        let delays = (0..<10).map { timing.reconnectDelay(attempt: $0, random: 0.5) }
        #expect(delays.prefix(4) == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4)])
        #expect(delays.last == .seconds(30))
        #expect(timing.reconnectDelay(attempt: 1000, random: 0.5) == .seconds(30))
    }

    @Test("jitter spreads each delay within ±20 %")
    func jitterBounds() {
        #expect(timing.reconnectDelay(attempt: 2, random: 0) == .milliseconds(1600))
        #expect(timing.reconnectDelay(attempt: 2, random: 1) == .milliseconds(2400))
        #expect(timing.reconnectDelay(attempt: 2, random: 7) == .milliseconds(2400))  // out-of-range input clamped
    }

    @Test("PodMatch parses lsusb-style ids and defaults to the spec's pid.codes id")
    func match() {
        #expect(PodMatch(parsing: "1209:0001") == PodMatch.default)
        #expect(PodMatch(parsing: "0403:6001") == PodMatch(vendorID: 0x0403, productID: 0x6001))
        #expect(PodMatch(parsing: "nope") == nil)
        #expect(PodMatch.default.description == "1209:0001")
    }
}
