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

    /// A heart rate that drifts down and back up across the night (a parabola) with the same
    /// 8-bpm step at 1 h and at 5 h: the feature the beats model reads keeps the step and loses
    /// the drift; the heart rate as measured keeps both.
    static func driftingNight(hours: Double) -> [[Double?]] {
        let epochs = (0..<Int(hours * 120)).map { i -> EpochFeatures in
            let t = Double(i) / 120
            let step = (abs(t - 1) < 0.25 || abs(t - 5) < 0.25) ? 8.0 : 0
            return EpochFeatures(heartRate: 70 - 6 * t + 0.6 * t * t + step)
        }
        return StagingFeatures.matrix(epochs)
    }

    @Test func theNightsHeartRateTrendIsRemovedFromTheDetrendedFeature() throws {
        let rows = Self.driftingNight(hours: 7)
        let measured = StagingFeatures.heartRateIndex, detrended = StagingFeatures.detrendedHeartRateIndex
        // 1 h and 5 h into the night: same stage step, 9.6 bpm apart in drift.
        let early = rows[120], late = rows[600], earlyBase = rows[180], lateBase = rows[660]
        let measuredGap = try #require(early[measured]) - #require(late[measured])
        #expect(abs(measuredGap - 9.6) < 0.5, "the drift is there as measured")
        let stepEarly = try #require(early[detrended]) - #require(earlyBase[detrended])
        let stepLate = try #require(late[detrended]) - #require(lateBase[detrended])
        #expect(abs(try #require(early[detrended]) - #require(late[detrended])) < 1, "and gone when detrended")
        #expect(stepEarly > 6 && stepLate > 6, "the step stays")
        // Above the detrended rate's own 10th percentile, like the measured feature.
        let low = rows.compactMap { $0[detrended] }.sorted()[rows.count / 10]
        #expect(abs(low) < 0.5)
    }

    @Test func aNightTooShortOrTooSparseForATrendKeepsItsHeartRate() throws {
        // 1.5 h of heart rate: a parabola through it would take the stages' swings for drift.
        let short = Self.driftingNight(hours: 1.5)
        // 7 h in bed, a heart rate in one epoch of 10 only (fewer than an hour's epochs).
        let sparse = StagingFeatures.matrix((0..<840).map { i in
            EpochFeatures(heartRate: i % 10 == 0 ? 70 - 0.05 * Double(i) : nil)
        })
        #expect(sparse.compactMap { $0[StagingFeatures.heartRateIndex] }.count == 84)
        for row in short + sparse {
            #expect(row[StagingFeatures.detrendedHeartRateIndex] == row[StagingFeatures.heartRateIndex])
        }
    }
}
