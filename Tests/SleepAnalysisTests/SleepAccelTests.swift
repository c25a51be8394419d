import Foundation
import Testing
@testable import SleepAnalysis

/// Healthy sleepers' heart rate and movement (sleep-accel-dev) through the analyzer's
/// public vitals input, as `podbridge analyze --vitals` reads them.
@Suite struct SleepAccelTests {
    @Test func everyNightLinesUpAndParsesAsAVitalsFile() throws {
        let ids = try LabelledNights.sleepAccelIDs()
        #expect(ids.count == 21)
        for id in ids {
            let night = try LabelledNights.sleepAccelNight(id)
            #expect(night.alignmentAgreement == 1, "\(id)")
            let vitals = try InputFormats.parseVitals(night.vitalsCSV, file: id)
            #expect(vitals.hasMovement)
            #expect(vitals.seconds.allSatisfy { $0.present })
            // One in-bed stay covering every scored epoch.
            let sessions = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!).analyze(AnalysisInput(vitalsFile: vitals))
            #expect(sessions.count == 1, "\(id)")
            let e = StagingEvaluation(reference: night.reference, predicted: sessions)
            #expect(e.pairs.count == night.reference.filter { $0.stage != nil }.count)
        }
    }

    /// Files that are no night of the study are refused with what is wrong, not trapped on:
    /// `--held-out` reads such folders from anywhere.
    @Test func filesThatAreNoNightAreRefusedWithTheReason() throws {
        func convert(labeled: String = "0 0\n30 2\n60 0\n", labels: String = "0\n2\n0\n",
                     hours: String = "0\n0.0083333\n0.0166667\n") throws -> SleepAccelNight {
            try SleepAccelNight(heartRate: "1,60\n31,58\n", labeledSleep: labeled, psgLabels: labels,
                                countFeature: "0\n0\n0\n", timeFeature: hours)
        }
        #expect(try convert().reference.map(\.stage) == [.awake, .core, .awake])
        #expect(throws: SleepAccelNight.ConversionError(description: "labeled_sleep:2: '1e300' is out of range for a night's file")) {
            try convert(labeled: "0 0\n1e300 2\n")
        }
        #expect(throws: SleepAccelNight.ConversionError(description: "time_feature:3: '9e99' is out of range for a night's file")) {
            try convert(hours: "0\n0.0083333\n9e99\n")
        }
        #expect(throws: SleepAccelNight.ConversionError(description: "labeled_sleep's scored epochs span more than 31 days")) {
            try convert(labeled: "0 0\n30 2\n2700000 0\n")
        }
        #expect(throws: SleepAccelNight.ConversionError(description: "psg_labels:2: 'x' is not a number")) {
            try convert(labels: "0\nx\n0\n")
        }
    }

    @Test func aNightLeftOutOfTraining() throws {
        let all = try LabelledNights.all()
        let model = try StagingTraining.fit(all.filter { $0.subject != "accel5498603" })
        let e = StagingTraining.evaluate(model, on: try LabelledNights.sleepAccel("5498603"))
        // Staged by the heart-rate-and-movement model, fitted on the other 20 healthy sleepers.
        // Measured: k2 0.460, k4 0.234, TST bias +15.5 min.
        #expect(e.kappa(.two) >= 0.45)
        #expect(e.kappa(.four) >= 0.18)
        #expect(abs(e.totalSleepBiasMinutes) <= 20)
    }

    @Test func movementHelpsFindWakeAndItsAbsenceIsNotStillness() throws {
        let id = "1066528"
        let model = try StagingTraining.fit(try LabelledNights.all().filter { $0.subject != "accel\(id)" })
        let moving = try LabelledNights.sleepAccel(id)
        let still = try LabelledNights.sleepAccel(id, withMovement: false)
        #expect(!still.input.vitalsMovementMeasured)
        let sessions = SleepAnalyzer(models: model, timeZone: TimeZone(identifier: "UTC")!).analyze(still.input)
        #expect(sessions.flatMap(\.epochs).allSatisfy { $0.features.movement == nil })
        // Measured: wake recall 0.24 with movement (the heart-rate-and-movement model), 0.18
        // without (the pooled model: heart rate alone); k2 0.30 / 0.11.
        let with = StagingTraining.evaluate(model, on: moving), without = StagingTraining.evaluate(model, on: still)
        #expect(with.recall(.awake) > without.recall(.awake) + 0.05)
        #expect(with.kappa(.two) > without.kappa(.two))
    }
}
