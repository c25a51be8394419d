import Foundation
import SleepDomain
import Testing
@testable import SleepAnalysis

/// The night's awake epochs are as many as its stage probabilities expect (`NightWakeShare`).
@Suite struct NightWakeShareTests {
    func p(_ awake: Double, core: Double? = nil, deep: Double = 0, rem: Double = 0) -> StageProbabilities {
        StageProbabilities(awake: awake, core: core ?? (1 - awake - deep - rem), deep: deep, rem: rem)
    }

    @Test func aNightTheModelIsSureOfIsStagedAsEachEpochsLikeliestStage() {
        let night = [p(1), p(0, core: 1), p(0, core: 0, deep: 1), p(0, core: 0, rem: 1), p(0.98), p(0.01, core: 0.02, deep: 0.97)]
        #expect(NightWakeShare.stages(night) == night.map(\.mostLikely))
        #expect(NightWakeShare.stages(night) == [.awake, .core, .deep, .rem, .awake, .deep])
    }

    @Test func wakingThatNeverOutweighsSleepEpochByEpochStillCounts() {
        // Ten epochs each 40 % awake: no epoch's likeliest stage is awake, yet four epochs'
        // worth of waking is expected, and the likeliest four are called awake.
        var night = (0..<10).map { _ in p(0.40, core: 0.45, deep: 0.15) }
        night[7] = p(0.45, core: 0.05, rem: 0.50)
        #expect(night.allSatisfy { $0.mostLikely != .awake })
        let stages = NightWakeShare.stages(night)
        #expect(stages.filter { $0 == .awake }.count == 4)
        // The likeliest awake first, then equals in epoch order.
        #expect(stages == [.awake, .awake, .awake, .core, .core, .core, .core, .awake, .core, .core])
    }

    @Test func wakingThatBarelyOutweighsSleepEverywhereIsNotAllWaking() {
        // Ten epochs 55 % awake: each one's likeliest stage is awake, but 5.5 epochs are expected.
        var night = (0..<10).map { _ in p(0.55, core: 0.10, deep: 0.05, rem: 0.30) }
        night[2] = p(0.60, core: 0.30, deep: 0.10)
        let stages = NightWakeShare.stages(night)
        #expect(stages.filter { $0 == .awake }.count == 6) // 5.55 rounds to 6
        #expect(stages[2] == .awake)
        // The epochs not called awake take their likeliest sleep stage.
        #expect(stages.filter { $0 != .awake }.allSatisfy { $0 == .rem })
    }

    @Test func anEmptyNightHasNoStages() {
        #expect(NightWakeShare.stages([]).isEmpty)
    }

    @Test func theAnalyzerStagesByTheNightsWakeShareOrEachEpochAsAsked() throws {
        let r = try LabelledNights.slpdb("slp14")
        let utc = TimeZone(identifier: "UTC")!
        let byNight = SleepAnalyzer(timeZone: utc).analyze(r.input)
        let byEpoch = SleepAnalyzer(timeZone: utc, decidesWakeByNight: false).analyze(r.input)
        #expect(byNight.count == 1 && byEpoch.count == 1)
        // The same probabilities, read two ways.
        #expect(byNight[0].epochs.map(\.probabilities) == byEpoch[0].epochs.map(\.probabilities))
        #expect(byEpoch[0].epochs.map(\.stage) == byEpoch[0].epochs.map(\.probabilities.mostLikely))
        #expect(byNight[0].epochs.map(\.stage) == NightWakeShare.stages(byNight[0].epochs.map(\.probabilities)))
        let expected = byNight[0].epochs.reduce(0.0) { $0 + $1.probabilities.awake }
        #expect(byNight[0].epochs.filter { $0.stage == .awake }.count == Int(expected.rounded()))
    }

    @Test func slp14LeftOutOfTrainingIsCloserToItsTotalSleep() throws {
        // slp14 lies awake and still for over an hour mid-night: epoch by epoch the beats model
        // leans to sleep there, but its P(awake) stays high enough to add up. Its leave-one-
        // subject-out fold, measured: TST bias +101.5 min epoch by epoch, +81.5 by the night's
        // wake share.
        let all = try LabelledNights.all()
        let models = try StagingTraining.fit(all.filter { $0.subject != "slp14" })
        let r = try LabelledNights.slpdb("slp14")
        let byNight = StagingTraining.evaluate(models, on: r)
        let byEpoch = StagingTraining.evaluate(models, on: r, decidesWakeByNight: false)
        #expect(byEpoch.totalSleepBiasMinutes > 90)
        #expect(byNight.totalSleepBiasMinutes < byEpoch.totalSleepBiasMinutes - 15)
        #expect(byNight.recall(.awake) > byEpoch.recall(.awake))
    }
}
