import Foundation
import Testing
@testable import SleepAnalysis
import SleepDomain

@Suite struct MetricsTests {
    func epochs(_ stages: [SleepStage], hr: Double? = nil) -> [Epoch] {
        stages.enumerated().map { i, s in
            Epoch(start: Double(i) * 30, stage: s, probabilities: .certain(s),
                  features: EpochFeatures(heartRate: s == .awake ? 90 : hr, rmssd: s == .awake ? 10 : 40))
        }
    }

    @Test func everyMetricOnAHandMadeHypnogram() throws {
        let a = SleepStage.awake, c = SleepStage.core, d = SleepStage.deep, r = SleepStage.rem
        let m = SessionMetrics(epochs: epochs([a, a, c, c, a, d, r, a, a, c, a, a], hr: 60))
        #expect(m.timeInBedMinutes == 6)
        #expect(m.totalSleepMinutes == 2.5)
        #expect(m.sleepEfficiency == 2.5 / 6)
        #expect(m.sleepOnsetLatencyMinutes == 1)
        #expect(m.wasoMinutes == 1.5)
        #expect(m.awakenings == 2)
        #expect(m.stageMinutes == StageMinutes(awake: 3.5, core: 1.5, deep: 0.5, rem: 0.5))
        #expect(abs(m.stageShares.awake - 3.5 / 6) < 1e-12)
        #expect(abs(m.stageShares.awake + m.stageShares.core + m.stageShares.deep + m.stageShares.rem - 1) < 1e-12)
        #expect(m.meanHeartRate == 60) // asleep epochs only
        #expect(m.meanRMSSD == 40)
        #expect(m.meanBreathingRate == nil)
    }

    /// The printed minutes add up to the time in bed: half minutes are printed as they are
    /// (13.5 + 37 of 50.5 min printed "14" and "37" of "50" before).
    @Test func printedStageMinutesAddUpToTheTimeInBed() throws {
        let stages = [SleepStage](repeating: .awake, count: 27) + [SleepStage](repeating: .core, count: 74)
        let e = epochs(stages, hr: 60)
        let session = SleepSession(start: 0, end: 101 * 30, wakeDate: CalendarDay("1970-01-01")!, timeZone: "UTC", isFinal: true,
                                   epochs: e, metrics: SessionMetrics(epochs: e))
        let text = HypnogramText.render(session, width: 40)
        #expect(text.contains("in bed 50.5 min, asleep 37 min,"), "\(text)")
        #expect(text.contains("awake 13.5 min (27%), core 37 min (73%), deep 0 min (0%), rem 0 min (0%)"), "\(text)")
    }

    @Test func nightWithoutSleep() {
        let m = SessionMetrics(epochs: epochs([.awake, .awake, .awake]))
        #expect(m.totalSleepMinutes == 0)
        #expect(m.sleepOnsetLatencyMinutes == nil)
        #expect(m.wasoMinutes == 0)
        #expect(m.awakenings == 0)
        #expect(m.score == 0)
        #expect(m.meanHeartRate == nil)
    }

    @Test func unbrokenSleepHasNoWASO() {
        let m = SessionMetrics(epochs: epochs([.core, .deep, .deep, .rem, .core]))
        #expect(m.sleepOnsetLatencyMinutes == 0)
        #expect(m.wasoMinutes == 0)
        #expect(m.awakenings == 0)
        #expect(m.sleepEfficiency == 1)
    }

    @Test func minutesWithoutDataCountNeitherWay() throws {
        let a = SleepStage.awake, c = SleepStage.core
        // 2.5 min measured (awake, then core), 90 min without data (180 epochs), 2.5 min
        // measured (core, an awakening, core): a session of 95 min.
        var measured = epochs([a, c, c, c, c])
        measured += epochs([c, c, a, a, c]).map { var e = $0; e.start += 185 * 30; return e }
        let m = SessionMetrics(epochs: measured, start: 0, end: 190 * 30)
        #expect(m.timeInBedMinutes == 95)
        #expect(m.unmeasuredMinutes == 90)
        #expect(m.totalSleepMinutes == 3.5)
        #expect(m.sleepEfficiency == 3.5 / 5)
        #expect(m.wasoMinutes == 1 && m.awakenings == 1)
        #expect(m.sleepOnsetLatencyMinutes == 0.5)
        #expect(abs(m.stageShares.awake - 1.5 / 5) < 1e-12)
        // Epochs that tile their span have nothing unmeasured.
        #expect(SessionMetrics(epochs: epochs([a, c, c])).unmeasuredMinutes == 0)
    }

    @Test func scoreFormula() {
        #expect(SleepScore.score(totalSleepMinutes: 420, efficiency: 0.95, deepMinutes: 63, remMinutes: 84, wasoMinutes: 0) == 100)
        // D 0.5, E 0.5, N 0, R 0.5, C 0.75 → 100 × (0.175 + 0.125 + 0 + 0.075 + 0.075) = 45
        #expect(SleepScore.score(totalSleepMinutes: 210, efficiency: 0.725, deepMinutes: 0, remMinutes: 21, wasoMinutes: 15) == 45)
        // Efficiency below 50 % and WASO over an hour earn nothing.
        #expect(SleepScore.score(totalSleepMinutes: 420, efficiency: 0.4, deepMinutes: 63, remMinutes: 84, wasoMinutes: 90) == 65)
        #expect(SleepScore.score(totalSleepMinutes: 0, efficiency: 0, deepMinutes: 0, remMinutes: 0, wasoMinutes: 0) == 0)
    }

    @Test func kappaAndTotalSleepBias() {
        let e = StagingEvaluation(pairs: [(.awake, .awake), (.core, .core), (.deep, .core), (.rem, .rem), (.awake, .core)])
        #expect(e.confusion(.two) == [[1, 1], [0, 3]])
        // 2-class: po 0.8, pe (2·1 + 3·4)/25 = 0.56 → κ = 0.24/0.44
        #expect(abs(e.kappa(.two) - 0.24 / 0.44) < 1e-12)
        #expect(e.accuracy(.four) == 0.6)
        #expect(e.totalSleepBiasMinutes == 0.5)
        #expect(e.wakeSensitivity == 0.5)
    }

    @Test func evaluationScoresAtEpochMidpointsAndMissingIsAwake() {
        let session = SleepSession(start: 30, end: 90, wakeDate: CalendarDay("1970-01-01")!, timeZone: "UTC", isFinal: true,
                                   epochs: epochs([.core, .core]).map { var e = $0; e.start += 30; return e },
                                   metrics: SessionMetrics(epochs: []))
        let reference: [InputFormats.StagedInterval] = [
            .init(start: 0, end: 30, stage: .core), .init(start: 30, end: 60, stage: .core),
            .init(start: 60, end: 90, stage: nil), .init(start: 90, end: 120, stage: .awake),
        ]
        let e = StagingEvaluation(reference: reference, predicted: [session])
        #expect(e.pairs.map(\.predicted) == [.awake, .core, .awake])
    }
}
