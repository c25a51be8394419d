import Foundation
import LabelledNights
import SleepAnalysis
import SleepDomain
import Testing

/// A folder of scored nights as someone with nights the project never saw would give it to
/// `podbridge-bench --held-out`: both layouts side by side, and files that do not make a night.
@Suite struct LabelledNightFolderTests {
    static let data = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Data")

    /// A fresh folder holding copies of `files` (paths under Data/) and the extra `texts`.
    static func folder(copying files: [String], texts: [String: String] = [:]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("labelled-nights-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for f in files {
            let source = data.appendingPathComponent(f)
            try FileManager.default.copyItem(at: source, to: dir.appendingPathComponent(source.lastPathComponent))
        }
        for (name, text) in texts { try Data(text.utf8).write(to: dir.appendingPathComponent(name)) }
        return dir
    }

    static let accelFiles = LabelledNightFolder.sleepAccelFiles.map { "sleep-accel-dev/46343_\($0)" }

    @Test func bothLayoutsAreReadSideBySideAndWhatIsNoNightIsSkippedWithItsReason() throws {
        let dir = try Self.folder(
            copying: ["slpdb-dev/slp03.beats.csv", "slpdb-dev/slp03.stages.csv"] + Self.accelFiles,
            texts: ["slp99.beats.csv": "beat_time\n1.0\n",
                    "orphan.stages.csv": "start,end,stage\n0,30,awake\n",
                    "bad.beats.csv": "beat_time\n601254420.1\nnot-a-time\n",
                    "bad.stages.csv": "start,end,stage\n601254420,601254450,awake\n",
                    "123_heartrate.txt": "0,60\n",
                    "README.md": "not a night\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let folder = try LabelledNightFolder(dir)

        #expect(folder.records.map(\.name) == ["slp03", "accel46343"])
        #expect(folder.records.map(\.dataset) == ["slpdb", "sleep-accel"])
        let reasons = Dictionary(uniqueKeysWithValues: folder.skipped.map { ($0.name, $0.reason) })
        #expect(Set(reasons.keys) == ["slp99", "orphan", "bad", "123"], "\(folder.skipped)")
        #expect(reasons["slp99"] == "slp99.beats.csv has no slp99.stages.csv beside it")
        #expect(reasons["orphan"] == "orphan.stages.csv has no orphan.beats.csv beside it")
        #expect(reasons["bad"]?.contains("bad.beats.csv:3") == true, "\(reasons["bad"] ?? "")")
        #expect(reasons["123"]?.hasPrefix("missing 123_labeled_sleep.txt, 123_psg_labels.out") == true,
                "\(reasons["123"] ?? "")")
    }

    @Test func aNightReadFromACopyIsTheNightOfData() throws {
        let dir = try Self.folder(copying: ["slpdb-dev/slp03.beats.csv", "slpdb-dev/slp03.stages.csv"] + Self.accelFiles)
        defer { try? FileManager.default.removeItem(at: dir) }
        let copied = try LabelledNightFolder(dir).records
        let original = try LabelledNightFolder(Self.data.appendingPathComponent("slpdb-dev")).records.filter { $0.name == "slp03" }
            + LabelledNightFolder(Self.data.appendingPathComponent("sleep-accel-dev")).records.filter { $0.name == "accel46343" }
        #expect(copied.map(\.reference) == original.map(\.reference))
        let stage = { (r: StagingTraining.Record) in
            StagingTraining.evaluate(StagingModels.default, on: r).pairs.map(\.predicted)
        }
        #expect(copied.map(stage) == original.map(stage))
        #expect(copied.allSatisfy { !$0.reference.isEmpty })
    }

    @Test func aFolderThatIsNotThereOrNotAFolderIsNamedWithWhy() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID())")
        #expect(throws: LabelledNightFolder.FolderError(description: "\(missing.path): no such folder")) {
            try LabelledNightFolder(missing)
        }
        let file = Self.data.appendingPathComponent("README.md")
        #expect(throws: LabelledNightFolder.FolderError(description: "\(file.path): not a folder")) {
            try LabelledNightFolder(file)
        }
    }

    @Test func aFolderWithNoNightReadsAsNone() throws {
        let dir = try Self.folder(copying: [], texts: ["notes.txt": "nothing here\n"])
        defer { try? FileManager.default.removeItem(at: dir) }
        let folder = try LabelledNightFolder(dir)
        #expect(folder.records.isEmpty)
        #expect(folder.skipped.isEmpty)
    }
}

@Suite struct StagingTargetsTests {
    /// A night of `epochs` epochs scored `truth`, predicted the same except the first `missed`
    /// awake epochs, called core.
    static func night(awake: Int, asleep: Int, missed: Int) -> StagingEvaluation {
        let truth = [SleepStage](repeating: .awake, count: awake) + [SleepStage](repeating: .core, count: asleep / 2)
            + [SleepStage](repeating: .deep, count: asleep - asleep / 2)
        return StagingEvaluation(pairs: truth.enumerated().map { i, t in (t, t == .awake && i < missed ? .core : t) })
    }

    @Test func nightsScoredRightMeetEveryTarget() {
        let t = StagingTargets([Self.night(awake: 60, asleep: 600, missed: 0), Self.night(awake: 100, asleep: 500, missed: 0)])
        #expect(t.kappa4 == 1 && t.kappa2 == 1 && t.meanBias == 0)
        #expect(t.allMet)
    }

    @Test func oneNightOffByMoreThanAnHourFailsTheNightTargetAndIsNamed() {
        // 121 awake epochs called asleep: +60.5 min on the second night.
        let nights = [Self.night(awake: 200, asleep: 600, missed: 0), Self.night(awake: 200, asleep: 600, missed: 121),
                      Self.night(awake: 200, asleep: 600, missed: 120)]
        let t = StagingTargets(nights)
        #expect(t.nightsBeyond == [1])
        #expect(!t.everyNightMet && !t.allMet)
        #expect(abs(t.meanBias - (60.5 + 60) / 3) < 1e-9)
        #expect(!t.meanBiasMet)
        #expect(t.kappa4Met)
    }

    @Test func noScoredEpochMeetsNothing() {
        let t = StagingTargets([])
        #expect(t.kappa4.isNaN && t.meanBias.isNaN)
        #expect(!t.kappa4Met && !t.kappa2Met && !t.meanBiasMet && !t.allMet)
    }
}
