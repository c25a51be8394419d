import Foundation
import LabelledNights
import SleepAnalysis
import Testing
import TestSupport

/// What `--held-out` and the bench measure is what a user runs: a research night staged in
/// process (`StagingTraining.evaluate`, the bench's path) and the same night given to
/// `podbridge analyze`, its `--epochs-out` scored by the held-out rule, agree epoch for epoch;
/// and `analyze --reference` prints the same agreement for one night.
@Suite struct HeldOutScoringCommandTests {
    static let data = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Data")

    /// Runs `podbridge analyze option input --epochs-out`, scores its epochs file against
    /// `record` and expects the bench's in-process staging of `record`, epoch for epoch.
    static func expectTheCommandStagesAsTheBench(_ option: String, _ input: URL, _ record: StagingTraining.Record) async throws {
        let epochs = CommandRunner.temporaryFile("epochs.csv")
        defer { try? FileManager.default.removeItem(at: epochs) }
        let r = try await CommandRunner.run(["analyze", option, input.path, "--tz", "UTC", "--epochs-out", epochs.path])
        #expect(r.status == 0, "\(r.stderr)")
        let predicted = try InputFormats.parseStages(String(contentsOf: epochs, encoding: .utf8), file: epochs.path)
        let command = StagingEvaluation(reference: record.reference, predictedEpochs: predicted)
        let bench = StagingTraining.evaluate(StagingModels.default, on: record)
        func stages(_ e: StagingEvaluation) -> [String] { e.pairs.map { "\($0.reference)>\($0.predicted)" } }
        #expect(command.pairs.count == record.reference.filter { $0.stage != nil }.count)
        #expect(stages(command) == stages(bench))
        #expect(command.kappa(.four) > 0.2, "the night is staged, not all awake")
    }

    @Test func aBeatsRecordStagesTheSameThroughTheCommand() async throws {
        let dir = Self.data.appendingPathComponent("slpdb-dev")
        let record = try LabelledNightFolder.slpdbRecord(in: dir, name: "slp03")
        try await Self.expectTheCommandStagesAsTheBench("--beats", dir.appendingPathComponent("slp03.beats.csv"), record)
    }

    @Test func aSleepAccelNightStagesTheSameThroughTheCommandFromItsVitalsFile() async throws {
        let dir = Self.data.appendingPathComponent("sleep-accel-dev")
        let night = try LabelledNightFolder.sleepAccelNight(in: dir, id: "46343")
        let vitals = CommandRunner.temporaryFile("vitals.csv")
        defer { try? FileManager.default.removeItem(at: vitals) }
        try Data(night.vitalsCSV.utf8).write(to: vitals)
        try await Self.expectTheCommandStagesAsTheBench("--vitals", vitals, try LabelledNightFolder.sleepAccelRecord(in: dir, id: "46343"))
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

    /// `make heldout` as its user runs it: the bench on a folder of nights it is given.
    @Test func theHeldOutBenchPrintsEachNightThePooledFiguresAndTheTargets() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("held-out-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let slpdb = Self.data.appendingPathComponent("slpdb-dev"), accel = Self.data.appendingPathComponent("sleep-accel-dev")
        for f in ["slp03.beats.csv", "slp03.stages.csv"] {
            try FileManager.default.copyItem(at: slpdb.appendingPathComponent(f), to: dir.appendingPathComponent(f))
        }
        for f in LabelledNightFolder.sleepAccelFiles.map({ "46343_\($0)" }) {
            try FileManager.default.copyItem(at: accel.appendingPathComponent(f), to: dir.appendingPathComponent(f))
        }
        try Data("0,60\n".utf8).write(to: dir.appendingPathComponent("77_heartrate.txt"))
        let r = try await CommandRunner.run(["--held-out", dir.path], product: "podbridge-bench")
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let nights = try [LabelledNightFolder.slpdbRecord(in: slpdb, name: "slp03"),
                          LabelledNightFolder.sleepAccelRecord(in: accel, id: "46343")]
        let evaluations = nights.map { StagingTraining.evaluate(StagingModels.default, on: $0) }
        #expect(r.stdout.contains("heldout.folder \(dir.path): 2 nights read, 1 skipped"), "\(r.stdout)")
        #expect(r.stdout.contains("heldout.skipped 77: missing 77_labeled_sleep.txt"), "\(r.stdout)")
        for (night, e) in zip(nights, evaluations) {
            #expect(r.stdout.contains(String(format: "staging.heldout.%@: acc4 %.3f k4 %.3f", night.name, e.accuracy(.four), e.kappa(.four))),
                    "\(r.stdout)")
        }
        let pooled = StagingEvaluation.pooled(evaluations)
        #expect(r.stdout.contains(String(format: "staging.heldout.pooled: 2 nights, %d epochs: acc4 %.3f k4 %.3f",
                                         pooled.pairs.count, pooled.accuracy(.four), pooled.kappa(.four))), "\(r.stdout)")
        #expect(r.stdout.contains("staging.heldout.slpdb.pooled: 1 nights"), "\(r.stdout)")
        #expect(r.stdout.contains(String(format: "staging.heldout.targets: k4 %.3f", pooled.kappa(.four))), "\(r.stdout)")

        let none = try await CommandRunner.run(["--held-out", dir.appendingPathComponent("nothing-here").path], product: "podbridge-bench")
        #expect(none.status == 1)
        #expect(none.stdout.contains("held-out: FAILED: \(dir.path)/nothing-here: no such folder"), "\(none.stdout)")
        let bare = try await CommandRunner.run(["--held-out"], product: "podbridge-bench")
        #expect(bare.status == 2)
        #expect(bare.stdout.contains("--held-out needs a folder"), "\(bare.stdout)")
    }
}
