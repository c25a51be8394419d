import Foundation
import SleepDomain
import Testing
@testable import SleepAnalysis

/// Breathing learnt from the night itself (`NightBreathing`): a night whose fitted features
/// barely tell the stages apart but whose breathing does is staged better with it; a night
/// without enough breathing is staged exactly as the fitted model alone stages it.
@Suite struct NightBreathingTests {
    /// One feature, four stages whose means overlap heavily (SD 1.5 around means 0.5 apart):
    /// weak evidence, like heart rate alone.
    static let model = StagingModel(
        means: [[1.0], [0.0], [-0.5], [0.5]], covariance: [[1.0]], trained: [true],
        transitions: (0..<4).map { a in (0..<4).map { b in a == b ? 0.94 : 0.02 } },
        initial: [0.25, 0.25, 0.25, 0.25], emissionWeight: 0.5)

    /// A night of 20-epoch stage blocks, the fitted feature weak, breathing clear: log CV and
    /// rate per stage as on a bed sensor (irregular and fast awake and in REM, steady and slow
    /// in deep sleep).
    static func night() -> (stages: [SleepStage], rows: [[Double?]], breathing: [[Double]?]) {
        let order: [SleepStage] = [.awake, .core, .deep, .core, .rem, .core, .deep, .core, .rem, .awake, .core, .rem]
        let stages = order.flatMap { [SleepStage](repeating: $0, count: 20) }
        var rng = SplitMix64(seed: 7)
        let logCV: [SleepStage: Double] = [.awake: -3.2, .core: -3.9, .deep: -4.4, .rem: -3.2]
        let rate: [SleepStage: Double] = [.awake: 16, .core: 14, .deep: 13, .rem: 15.5]
        let rows: [[Double?]] = stages.map { [model.means[$0.index][0] + 1.5 * rng.gaussian()] }
        let breathing: [[Double]?] = stages.map { [logCV[$0]! + 0.15 * rng.gaussian(), rate[$0]! + 0.3 * rng.gaussian()] }
        return (stages, rows, breathing)
    }

    static func accuracy(_ p: [StageProbabilities], _ truth: [SleepStage]) -> Double {
        Double(zip(p, truth).filter { $0.0.mostLikely == $0.1 }.count) / Double(truth.count)
    }

    @Test func breathingSeparatesWhatTheFittedFeaturesCannot() {
        let n = Self.night()
        let alone = Self.model.probabilities(n.rows, isFinal: true)
        let with = NightBreathing.probabilities(model: Self.model, rows: n.rows, breathing: n.breathing, isFinal: true)
        let a = Self.accuracy(alone, n.stages), b = Self.accuracy(with, n.stages)
        #expect(b >= a + 0.2, "accuracy alone \(a), with breathing \(b)")
        // Deep sleep's steady, slow breathing is learnt from the night: its epochs come out deep.
        let deep = n.stages.indices.filter { n.stages[$0] == .deep }
        #expect(deep.filter { with[$0].mostLikely == .deep }.count * 10 >= deep.count * 8)
    }

    @Test func liveStagesAreForwardFiltered() {
        let n = Self.night()
        let live = NightBreathing.probabilities(model: Self.model, rows: n.rows, breathing: n.breathing, isFinal: false)
        let final = NightBreathing.probabilities(model: Self.model, rows: n.rows, breathing: n.breathing, isFinal: true)
        #expect(live.count == n.stages.count)
        // Filtering and smoothing differ (only the last epoch sees the same data both ways)…
        #expect(live.dropLast() != final.dropLast())
        #expect(abs(live.last!.deep - final.last!.deep) < 1e-9)
        // … and the live stages still gain from breathing.
        #expect(Self.accuracy(live, n.stages) > Self.accuracy(Self.model.probabilities(n.rows, isFinal: false), n.stages))
    }

    @Test func tooLittleBreathingLeavesTheFittedModelAlone() {
        let n = Self.night()
        var sparse = n.breathing.map { _ in [Double]?.none }
        for i in 0..<(NightLearning.minimumEpochs - 1) { sparse[i * 4] = n.breathing[i * 4] }
        for isFinal in [true, false] {
            #expect(NightBreathing.probabilities(model: Self.model, rows: n.rows, breathing: sparse, isFinal: isFinal)
                    == Self.model.probabilities(n.rows, isFinal: isFinal))
        }
    }

    @Test func anEpochWithoutBothReadingsHasNoBreathingRow() {
        #expect(NightBreathing.row(EpochFeatures(breathingRate: 14, breathingVariability: nil)) == nil)
        #expect(NightBreathing.row(EpochFeatures(breathingRate: nil, breathingVariability: 0.02)) == nil)
        #expect(NightBreathing.row(EpochFeatures(breathingRate: .nan, breathingVariability: 0.02)) == nil)
        let row = NightBreathing.row(EpochFeatures(breathingRate: 14, breathingVariability: 0))
        #expect(row == [log(0.005), 14])
    }
}
