@testable import NightModel
import SleepDomain
import Testing

/// `SideTruth.epochStage`: the reference stage every scoring of a simulated night uses.
@Suite struct EpochStageTests {
    /// A side whose per-second stages are `stages` (nil: out of bed).
    private func side(_ stages: [SleepStage?]) -> SideTruth {
        SideTruth(occupied: true, present: stages.map { $0 != nil }, stage: stages,
                  heartRate: stages.map { _ in nil }, breathingRate: stages.map { _ in nil },
                  movement: stages.map { _ in false }, beatTimes: [])
    }

    @Test func theStageOfMostInBedSecondsWins() {
        let t = side(Array(repeating: .core, count: 12) + Array(repeating: .deep, count: 18))
        #expect(t.epochStage(startingAt: 0) == .deep)
        // In bed 20 s of 30: core 8, rem 12 → rem, though neither fills half the epoch.
        let u = side(Array(repeating: nil, count: 10) + Array(repeating: .core, count: 8) + Array(repeating: .rem, count: 12))
        #expect(u.epochStage(startingAt: 0) == .rem)
    }

    @Test func anEpochHalfOutOfBedOrPastTheNightHasNoStage() {
        let t = side(Array(repeating: nil, count: 15) + Array(repeating: .core, count: 15))
        #expect(t.epochStage(startingAt: 0) == nil)
        // From second 16: 14 core seconds, then the night ends (no seconds past it count).
        #expect(t.epochStage(startingAt: 16) == nil)
        let full = side(Array(repeating: .core, count: 60))
        #expect(full.epochStage(startingAt: 30) == .core)
        #expect(full.epochStage(startingAt: 45) == nil)
    }
}
