import Foundation
import PodDevice
import Testing
import TestSupport

/// Mistakes a user makes on the command line, each refused before any work or file is done
/// and said in a sentence; and inputs written the way other tools write them, read right.
/// (Found by trying every command as a new user would, 2026-11-27.)
@Suite struct UserMistakeCommandTests {
    static let slpdb = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Data/slpdb-dev")

    static func temporaryDirectory() throws -> URL {
        let dir = CommandRunner.temporaryFile("dir")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A scoring in stage blocks (consecutive epochs of one stage merged, as trackers and Apple
    /// Health export them) agrees exactly as the same scoring epoch by epoch. Before, each row
    /// counted as one epoch whatever its length: a 2-h block was 30 s of sleep.
    @Test func aReferenceInStageBlocksCountsEveryEpochOfEachBlock() async throws {
        let beats = Self.slpdb.appendingPathComponent("slp01a.beats.csv").path
        let epochs = Self.slpdb.appendingPathComponent("slp01a.stages.csv")
        var blocks: [(start: String, end: String, stage: String)] = []
        for line in try String(contentsOf: epochs, encoding: .utf8).split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",").map(String.init)
            if let last = blocks.last, last.stage == f[2], last.end == f[0] {
                blocks[blocks.count - 1].end = f[1]
            } else {
                blocks.append((f[0], f[1], f[2]))
            }
        }
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let merged = dir.appendingPathComponent("blocks.csv")
        try Data(("start,end,stage\n" + blocks.map { "\($0.start),\($0.end),\($0.stage)\n" }.joined()).utf8).write(to: merged)
        #expect(blocks.count < 120, "the scoring has long blocks: \(blocks.count) of 240 epochs")

        let byEpoch = try await CommandRunner.run(["analyze", "--beats", beats, "--tz", "UTC", "--reference", epochs.path])
        let byBlock = try await CommandRunner.run(["analyze", "--beats", beats, "--tz", "UTC", "--reference", merged.path])
        #expect(byEpoch.status == 0 && byBlock.status == 0, "\(byEpoch.stderr)\(byBlock.stderr)")
        func agreement(_ out: String) -> String {
            out.components(separatedBy: "agreement with ").last?.split(separator: "\n", maxSplits: 1).last.map(String.init) ?? ""
        }
        #expect(byBlock.stdout.contains("239 scored epochs"), "\(byBlock.stdout)")  // 240 epochs, one unscored
        #expect(!agreement(byEpoch.stdout).isEmpty && agreement(byBlock.stdout) == agreement(byEpoch.stdout),
                "epoch by epoch:\n\(byEpoch.stdout)\nin blocks:\n\(byBlock.stdout)")
    }

    /// Overlapping rows are two scorings of the same time: refused with the line.
    @Test func aReferenceWithOverlappingRowsIsRefused() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("overlap.csv")
        try Data("start,end,stage\n601254420,601254480,deep\n601254450,601254510,core\n".utf8).write(to: file)
        let r = try await CommandRunner.run(["analyze", "--beats", Self.slpdb.appendingPathComponent("slp01a.beats.csv").path,
                                             "--reference", file.path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("overlap.csv:3: 'start' is before the previous row's 'end'"), "\(r.stderr)")
    }

    /// Another night's scoring has no epoch in the staged session: its figures would be noise
    /// (accuracy 0.125, kappa 0 before), so the command fails and says so.
    @Test func aReferenceOfAnotherNightIsRefused() async throws {
        let r = try await CommandRunner.run(["analyze", "--beats", Self.slpdb.appendingPathComponent("slp01a.beats.csv").path,
                                             "--tz", "UTC", "--reference", Self.slpdb.appendingPathComponent("slp02a.stages.csv").path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("slp02a.stages.csv: none of its scored epochs falls in a staged session"), "\(r.stderr)")
        #expect(r.stderr.contains("1989-02-01"), "the reference's own dates: \(r.stderr)")
        #expect(!r.stdout.contains("accuracy"), "\(r.stdout)")
    }

    /// Output paths are checked before the night is analysed: no file half written, no dump.
    @Test func analyzeOutputsThatCannotBeWrittenAreUsageErrors() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let beats = Self.slpdb.appendingPathComponent("slp01a.beats.csv").path
        let epochs = dir.appendingPathComponent("epochs.csv").path
        let missing = try await CommandRunner.run(["analyze", "--beats", beats, "--epochs-out", "\(dir.path)/no/e.csv"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--epochs-out \(dir.path)/no/e.csv: no directory \(dir.path)/no"), "\(missing.stderr)")
        let directory = try await CommandRunner.run(["analyze", "--beats", beats, "--epochs-out", epochs, "--json", dir.path])
        #expect(directory.status == 64)
        #expect(directory.stderr.contains("--json \(dir.path) is a directory; give a file name"), "\(directory.stderr)")
        #expect(!FileManager.default.fileExists(atPath: epochs), "nothing written before the refusal")
        for r in [missing, directory] { #expect(!r.stderr.contains("NSCocoaErrorDomain"), "\(r.stderr)") }
        // A file that is there is written over (as `/dev/stdout` is, whose folder no user may write).
        try Data("old".utf8).write(to: URL(fileURLWithPath: epochs))
        let over = try await CommandRunner.run(["analyze", "--beats", beats, "--epochs-out", epochs])
        #expect(over.status == 0, "\(over.stderr)")
        #expect(try String(contentsOfFile: epochs, encoding: .utf8).hasPrefix("start,end,stage\n"))
    }

    /// `--truth` is made before the night is played: at --speed 1 a bad path used to cost the
    /// whole night, refused at its end with Foundation's dump.
    @Test func simulateRefusesATruthPathBeforePlaying() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("a-file")
        try Data().write(to: file)
        // Eight hours at real speed: only a refusal before the night ends this run.
        let r = try await CommandRunner.run(["simulate", "--duration", "8", "--speed", "1", "--truth", file.path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("--truth \(file.path) is a file, not a directory"), "\(r.stderr)")
        #expect(!r.stdout.contains("/dev/pts/"), "no pod was started: \(r.stdout)")
    }

    /// A state directory given as the database file: a sentence, not "SQLite error 10: disk I/O error".
    @Test func aDirectoryAsTheDatabaseIsNamed() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for arguments in [["export", "--all", "--db", dir.path], ["schedule", "show", "--db", dir.path]] {
            let r = try await CommandRunner.run(arguments)
            #expect(r.status == 1)
            #expect(r.stderr.contains("\(dir.path) is a directory, not a database file"), "\(arguments): \(r.stderr)")
        }
    }

    /// `schedule set` for a pod before the hub ran creates the database; a refused one must not.
    @Test func aRefusedScheduleSetCreatesNoDatabase() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let state = dir.appendingPathComponent("state").path
        let cases: [([String], String)] = [
            (["--pod", "a b", "--bedtime", "23:00", "--wake", "07:00"], "--pod 'a b' is not a pod serial"),
            (["--pod", "POD1", "--bedtime", "07:00", "--wake", "07:00"], "bedtime and wake are both 07:00"),
            (["--pod", "POD1", "--bedtime", "23:00", "--wake", "07:00", "--weekend-bedtime", "08:00", "--weekend-wake", "08:00"],
             "bedtime and wake are both 08:00"),
            // The wrong way round: 23 h 55 min of night and the default 30-min warm-up and delay.
            (["--pod", "POD1", "--bedtime", "22:00", "--wake", "21:55"], "keeps the power on for 24 h 55 min, a day or longer"),
            (["--pod", "POD1", "--bedtime", "23:00", "--wake", "07:00", "--weekend-bedtime", "09:00", "--weekend-wake", "08:45"],
             "a night of 23 h 45 min from bedtime to wake"),
        ]
        for (arguments, says) in cases {
            let r = try await CommandRunner.run(["schedule", "set", "--state-dir", state] + arguments)
            #expect(r.status == 64, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(says), "\(arguments): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: state), "\(arguments) left \(state) behind")
        }
        let accepted = try await CommandRunner.run(["schedule", "set", "--state-dir", state, "--pod", "POD1",
                                                    "--bedtime", "23:00", "--wake", "07:00"])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(FileManager.default.fileExists(atPath: state + "/podbridge.sqlite"))
    }

    /// A path that is there but is no terminal can never become a pod: `stream` stops at once
    /// instead of retrying for ever.
    @Test func streamRefusesAPathThatIsNoTerminal() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("not-a-tty")
        try Data("x".utf8).write(to: file)
        for (path, says) in [(dir.path, "is a directory"), (file.path, "is not a terminal device")] {
            let r = try await CommandRunner.run(["stream", "--path", path])
            #expect(r.status == 1)
            #expect(r.stderr.contains("--path \(path) \(says)"), "\(r.stderr)")
        }
    }

    /// `run`'s own options are usage errors named as options (64), as every other command's.
    @Test func runOptionMistakesAreUsageErrors() async throws {
        let tz = try await CommandRunner.run(["run", "--no-api", "--tz", "Mars/Olympus"])
        #expect(tz.status == 64)
        #expect(tz.stderr.contains("unknown time zone 'Mars/Olympus' for --tz"), "\(tz.stderr)")
        let listen = try await CommandRunner.run(["run", "--listen", "nonsense"])
        #expect(listen.status == 64)
        #expect(listen.stderr.contains("--listen: "), "\(listen.stderr)")
    }

    /// An option overrides a variable, a bad variable's value included.
    @Test func analyzeTzStandsInForABadTimeZoneVariable() async throws {
        let beats = Self.slpdb.appendingPathComponent("slp01a.beats.csv").path
        let variable = ["PODBRIDGE_TIME_ZONE": "Mars/Olympus"]
        let bad = try await CommandRunner.run(["analyze", "--beats", beats], environment: variable)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("$PODBRIDGE_TIME_ZONE"), "\(bad.stderr)")
        let overridden = try await CommandRunner.run(["analyze", "--beats", beats, "--tz", "Europe/Berlin"], environment: variable)
        #expect(overridden.status == 0, "\(overridden.stderr)")
        #expect(overridden.stdout.contains("Europe/Berlin"), "\(overridden.stdout)")
    }

    /// A pod another process holds is there and busy, not a failure; `--no-hello` opens nothing.
    @Test func devicesShowsAHeldPathAsBusyAndNoHelloOpensNothing() async throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let holder = try SerialTransport(path: pty.path)
        defer { holder.close() }
        let busy = try await CommandRunner.run(["devices", "--path", pty.path])
        #expect(busy.status == 0, "\(busy.stdout)\(busy.stderr)")
        #expect(busy.stdout.contains(pty.path) && busy.stdout.contains("busy (in use by another process)"), "\(busy.stdout)")
        let unopened = try await CommandRunner.run(["devices", "--path", pty.path, "--no-hello"])
        #expect(unopened.status == 0, "\(unopened.stdout)\(unopened.stderr)")
        #expect(unopened.stdout.contains("?  ") && !unopened.stdout.contains("busy"), "\(unopened.stdout)")
    }

    /// A database damaged inside (a bad sector, an SD card) opens and reads; the hub used to
    /// start on it and lose every night it then failed to write. It is refused at start, and
    /// a command that wrote to a database leaves the file alone complete (no log beside it).
    @Test func aDatabaseDamagedInsideIsRefusedWhenTheHubStarts() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = dir.appendingPathComponent("podbridge.sqlite").path
        let set = try await CommandRunner.run(["schedule", "set", "--db", db, "--pod", "P1", "--bedtime", "22:00", "--wake", "07:00"])
        #expect(set.status == 0, "\(set.stderr)")
        let log = (try? FileManager.default.attributesOfItem(atPath: db + "-wal")[.size] as? Int) ?? 0
        #expect(log == 0, "schedule set left \(log) bytes in the log")
        let size = try #require(FileManager.default.attributesOfItem(atPath: db)[.size] as? Int)
        #expect(size > 4 * 4096)
        let file = try #require(FileHandle(forUpdatingAtPath: db))
        try file.seek(toOffset: 3 * 4096)
        file.write(Data(repeating: 0xA5, count: 4096))
        try file.close()
        let hub = try CommandRunner.Launched(["run", "--db", db, "--path", dir.appendingPathComponent("no-pod").path, "--no-api"], product: "podbridge")
        guard try await hub.exited(within: 60) else {
            hub.process.terminate()
            Issue.record("the hub started on a damaged database: \(hub.stdout)")
            return
        }
        #expect(hub.process.terminationStatus == 1)
        #expect(hub.stderr.contains("Error: the database \(db) is damaged (") && hub.stderr.contains(".recover"), "\(hub.stderr)")
        #expect(!hub.stdout.contains("using the pod"), "\(hub.stdout)")
        // The commands that read what the hub stored say so too; export used to answer that
        // the file held no sessions.
        for command in [["export", "--db", db, "--all"], ["schedule", "show", "--db", db],
                        ["schedule", "set", "--db", db, "--pod", "P1", "--bedtime", "23:00", "--wake", "07:00"],
                        ["sync", "--db", db, "--url", "http://127.0.0.1:9"]] {
            let result = try await CommandRunner.run(command)
            #expect(result.status == 1, "\(command): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("Error: the database \(db) is damaged ("), "\(command): \(result.stderr)")
        }
    }

}
