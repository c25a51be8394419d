import Testing
@testable import SleepAnalysis

/// The model's movement feature is relative to the night, so a sensor's unit does not decide
/// what counts as moving (the pod's log-ratio index with a noise floor, a watch's counts).
@Suite struct StagingFeatureTests {
    /// A night: mostly still, some twitches, a few large movements.
    static let pattern: [Double] = (0..<200).map { i in i % 25 == 0 ? 8 : i % 7 == 0 ? 1 : 0 }

    static func movementFeature(_ movement: [Double]) -> [Double?] {
        StagingFeatures.matrix(movement.map { EpochFeatures(heartRate: 60, movement: $0) }).map { $0[0] }
    }

    @Test func theSameNightInAnotherUnitGivesTheSameFeature() throws {
        let counts = Self.movementFeature(Self.pattern)
        // The pod's unit: a noise floor of 0.1 and a tenth of the scale.
        let index = Self.movementFeature(Self.pattern.map { 0.1 + $0 / 10 })
        #expect(counts.count == index.count)
        for (a, b) in zip(counts, index) { #expect(abs(try #require(a) - #require(b)) < 1e-9) }
        // Still epochs are 0, the large movements well above the twitches.
        #expect(counts[1] == 0)
        #expect(try #require(counts[0]) > #require(counts[7]) + 1)
    }

    @Test func aStillNightStaysStillAndUnmeasuredMovementIsLeftOut() throws {
        // Noise of 0.01 around a still level: the spread floor keeps it near 0, not "moving".
        let still = Self.movementFeature((0..<100).map { 0.1 + ($0 % 2 == 0 ? 0.01 : 0) })
        #expect(still.allSatisfy { ($0 ?? .nan) < 0.7 })
        let unmeasured = StagingFeatures.matrix(Self.pattern.map { EpochFeatures(heartRate: 60, movement: $0) },
                                                movementMeasured: false)
        #expect(unmeasured.allSatisfy { $0[0] == nil })
    }
}
