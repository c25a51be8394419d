import Testing
@testable import SleepAnalysis

/// Presence when capacitance readings go missing: lost frames are no evidence that someone
/// got in, however strongly the empty side's piezo picks up the partner and the pump.
@Suite struct PresenceTrackerTests {
    /// The piezo level of an empty side next to a sleeper and a running pump: over the
    /// piezo's own enter threshold.
    static let bleed = 50_000.0
    static let empty = 1_000.0

    @Test func aGapInCapacitanceReadingsIsNotPresence() {
        let config = FrontEndConfig()
        var tracker = PresenceTracker(config: config)
        // 20 s of readings saying "empty" while the piezo is busy …
        for s in 0..<20 {
            let present = tracker.update(second: s, capacitance: Self.empty, piezoLevel: Self.bleed)
            #expect(!present)
        }
        // … then the capacitance frames are lost for 50 s: still empty (this was presence
        // from the sixth second of the gap, when the piezo alone decided).
        for s in 20..<70 {
            let present = tracker.update(second: s, capacitance: nil, piezoLevel: Self.bleed)
            #expect(!present, "second \(s)")
        }
        // Readings come back, still empty: still nobody.
        let present = tracker.update(second: 70, capacitance: Self.empty, piezoLevel: Self.bleed)
        #expect(!present)
    }

    @Test func theHeldDecisionIsTheLastOneEitherWay() {
        var tracker = PresenceTracker(config: FrontEndConfig())
        for s in 0..<10 { _ = tracker.update(second: s, capacitance: Self.empty, piezoLevel: 10_000) }
        // Someone gets in (well over the enter threshold), then the readings stop while the
        // piezo falls quiet (a still sleeper): they stay in bed for the hold.
        for s in 10..<20 { _ = tracker.update(second: s, capacitance: Self.empty + 900, piezoLevel: 20_000) }
        #expect(tracker.present)
        for s in 20..<(20 + FrontEndConfig().capacitanceHoldSeconds) {
            let present = tracker.update(second: s, capacitance: nil, piezoLevel: 5_000)
            #expect(present, "second \(s)")
        }
    }

    @Test func capacitanceGoneForGoodLeavesThePiezoToDecide() {
        let config = FrontEndConfig()
        var tracker = PresenceTracker(config: config)
        for s in 0..<20 { _ = tracker.update(second: s, capacitance: Self.empty, piezoLevel: 10_000) }
        // No capacitance since second 19; a strong body signal from second 20. Once the hold
        // is over the piezo decides (its own enter hold has long passed).
        let handOver = 19 + config.capacitanceHoldSeconds + 1
        for s in 20..<handOver {
            let present = tracker.update(second: s, capacitance: nil, piezoLevel: Self.bleed)
            #expect(!present)
        }
        let present = tracker.update(second: handOver, capacitance: nil, piezoLevel: Self.bleed)
        #expect(present)
    }
}
