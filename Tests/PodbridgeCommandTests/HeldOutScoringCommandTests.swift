import Foundation
import LabelledNights
import SleepAnalysis
import Testing

/// What `--held-out` and the bench measure is what a user runs: a research night staged in
/// process (`StagingTraining.evaluate`, the bench's path) and the same night given to
/// `podbridge analyze`, its `--epochs-out` scored by the held-out rule, agree epoch for epoch;
/// and `analyze --reference` prints the same agreement for one night.
@Suite struct HeldOutScoringCommandTests {
    static let data = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Data")

    /// Runs `podbridge analyze` on `input` and scores its epochs file against `record`.
    static func commandScore(_ option: String, _ input: URL, _ record: StagingTraining.Record) async throws -> StagingEvaluation {
        let epochs = CommandRunner.temporaryFile("epochs.csv")
        defer { try? FileManager.default.removeItem(at: epochs) }
        let r = try await CommandRunner.run(["analyze", option, input.path, "--tz", "UTC", "--epochs-out", epochs.path])
        #expect(r.status == 0, "\(r.stderr)")
        let predicted = try InputFormats.parseStages(String(contentsOf: epochs, encoding: .utf8), file: epochs.path)
        return StagingEvaluation(reference: record.reference, predictedEpochs: predicted)
    }

    static func stages(_ e: StagingEvaluation) -> [String] { e.pairs.map { "\($0.reference)>\($0.predicted)" } }

    @Test func aBeatsRecordStagesTheSameThroughTheCommand() async throws {
        let dir = Self.data.appendingPathComponent("slpdb-dev")
        let record = try LabelledNightFolder.slpdbRecord(in: dir, name: "slp03")
        let bench = StagingTraining.evaluate(StagingModels.default, on: record)
        let command = try await Self.commandScore("--beats", dir.appendingPathComponent("slp03.beats.csv"), record)
        #expect(command.pairs.count == record.reference.filter { $0.stage != nil }.count)
        #expect(Self.stages(command) == Self.stages(bench))
        #expect(command.kappa(.four) > 0.2, "the night is staged, not all awake")
    }

    @Test func aSleepAccelNightStagesTheSameThroughTheCommandFromItsVitalsFile() async throws {
        let dir = Self.data.appendingPathComponent("sleep-accel-dev")
        let night = try LabelledNightFolder.sleepAccelNight(in: dir, id: "46343")
        let record = try LabelledNightFolder.sleepAccelRecord(in: dir, id: "46343")
        let vitals = CommandRunner.temporaryFile("vitals.csv")
        defer { try? FileManager.default.removeItem(at: vitals) }
        try Data(night.vitalsCSV.utf8).write(to: vitals)
        let bench = StagingTraining.evaluate(StagingModels.default, on: record)
        let command = try await Self.commandScore("--vitals", vitals, record)
        #expect(command.pairs.count == record.reference.filter { $0.stage != nil }.count)
        #expect(Self.stages(command) == Self.stages(bench))
        #expect(command.kappa(.four) > 0.2, "the night is staged, not all awake")
    }

    @Test func theReferenceOptionPrintsTheAgreementTheBenchMeasures() async throws {
        let dir = Self.data.appendingPathComponent("slpdb-dev")
        let record = try LabelledNightFolder.slpdbRecord(in: dir, name: "slp03")
        let bench = StagingTraining.evaluate(StagingModels.default, on: record)
        let r = try await CommandRunner.run(["analyze", "--beats", dir.appendingPathComponent("slp03.beats.csv").path, "--tz", "UTC",
                                             "--reference", dir.appendingPathComponent("slp03.stages.csv").path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\(bench.pairs.count) scored epochs"), "\(r.stdout)")
        #expect(r.stdout.contains(String(format: "awake/core/deep/rem: accuracy %.3f, kappa %.3f", bench.accuracy(.four), bench.kappa(.four))),
                "\(r.stdout)")
        #expect(r.stdout.contains(String(format: "awake/asleep: accuracy %.3f, kappa %.3f", bench.accuracy(.two), bench.kappa(.two))),
                "\(r.stdout)")
        #expect(r.stdout.contains(String(format: "(%+.1f min)", bench.totalSleepBiasMinutes)), "\(r.stdout)")
        #expect(r.stdout.contains("\(bench.confusion(.four))"), "\(r.stdout)")
    }

    @Test func aReferenceThatIsNotAScoringIsRefusedWithItsLine() async throws {
        let dir = Self.data.appendingPathComponent("slpdb-dev")
        let bad = CommandRunner.temporaryFile("reference.csv")
        defer { try? FileManager.default.removeItem(at: bad) }
        try Data("start,end,stage\n607304880,607304910,core\n607304910,607304940,asleep\n".utf8).write(to: bad)
        let r = try await CommandRunner.run(["analyze", "--beats", dir.appendingPathComponent("slp03.beats.csv").path,
                                             "--tz", "UTC", "--reference", bad.path])
        #expect(r.status != 0)
        #expect(r.stderr.contains("\(bad.path):3"), "\(r.stderr)")
        #expect(r.stderr.contains("asleep"), "\(r.stderr)")
        #expect(!r.stdout.contains("session 1"), "nothing is printed before the reference is read: \(r.stdout)")
    }

    @Test func aReferenceWithNothingScoredSaysSo() async throws {
        let dir = Self.data.appendingPathComponent("slpdb-dev")
        let unscored = CommandRunner.temporaryFile("reference.csv")
        defer { try? FileManager.default.removeItem(at: unscored) }
        try Data("start,end,stage\n607304880,607304910,unscored\n".utf8).write(to: unscored)
        let r = try await CommandRunner.run(["analyze", "--beats", dir.appendingPathComponent("slp03.beats.csv").path,
                                             "--tz", "UTC", "--reference", unscored.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("agreement with \(unscored.path): no scored epoch to compare"), "\(r.stdout)")
    }

    @Test func aReferenceForBothSidesOfACaptureIsRefused() async throws {
        let r = try await CommandRunner.run(["analyze", "--capture", "night.cap", "--reference", "stages.csv"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--reference scores one night: with --capture, name its --side (left or right)"), "\(r.stderr)")
    }
}
