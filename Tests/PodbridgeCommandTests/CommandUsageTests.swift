import Foundation
import Testing
import TestSupport

/// Two kinds of mistake, answered two ways. A command called wrongly (a missing or
/// malformed option) says what is wrong and shows *its own* usage, exit status 64; a command
/// called rightly that cannot do its work (a configuration file that is not valid, no
/// database, no backend, a replay file that is missing) says only what is wrong, exit status
/// 1. Neither shows the top-level usage ("podbridge <subcommand>"), which tells a user nothing
/// about the command they ran.
@Suite struct CommandUsageTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let arguments: [String]
        let says: String
        /// The command whose usage follows the error, or nil for none.
        let usage: String?
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let usageErrors: [Case] = [
        Case(arguments: ["export"], says: "choose exactly one of --date, --from/--to, --all", usage: "export"),
        Case(arguments: ["inspect", "--limit=-1", "x.cap"], says: "--limit is a number of frames, 0 or more, not -1", usage: "inspect"),
        Case(arguments: ["stream", "--serial", "a b"], says: "--serial 'a b' is not a pod serial", usage: "stream"),
        Case(arguments: ["export", "--all", "--side", "middle"], says: "unknown side 'middle' (use left or right)", usage: "export"),
        Case(arguments: ["export", "--date", "2026-13-45"], says: "2026-13-45", usage: "export"),
        Case(arguments: ["export", "--all", "--format", "xml"], says: "xml", usage: "export"),
        Case(arguments: ["export", "--all", "--tz", "Mars/Olympus"], says: "Mars/Olympus", usage: "export"),
        Case(arguments: ["export", "--from", "2026-01-10", "--to", "2026-01-01"],
             says: "range start 2026-01-10 is after its end 2026-01-01", usage: "export"),
        Case(arguments: ["export", "--all", "--epochs", "--format", "blocks"],
             says: "--epochs applies to the json and csv formats only", usage: "export"),
        Case(arguments: ["export", "--all", "--output", "/nonexistent-podbridge/out.json"],
             says: "--output /nonexistent-podbridge/out.json: no directory /nonexistent-podbridge", usage: "export"),
        Case(arguments: ["export", "--all", "--output", "/tmp"], says: "--output /tmp is a directory; give a file name", usage: "export"),
        Case(arguments: ["simulate", "--in-bed", "600"], says: "--in-bed must be 0 … 48 minutes (at most 10% of the 8 h night), got 600",
             usage: "simulate"),
        Case(arguments: ["stream", "--usb-id", "nope"], says: "--usb-id must look like 1209:0001, got 'nope'", usage: "stream"),
        Case(arguments: ["stream", "--interval", "0"], says: "--interval must be positive", usage: "stream"),
        Case(arguments: ["devices", "--usb-id", "12:zz"], says: "--usb-id must look like 1209:0001", usage: "devices"),
        Case(arguments: ["schedule", "show", "--side", "middle"], says: "--side must be left, right or both, got 'middle'",
             usage: "schedule show"),
        Case(arguments: ["schedule", "infer", "--tz", "Mars/Olympus"], says: "unknown time zone 'Mars/Olympus'",
             usage: "schedule infer"),
        Case(arguments: ["schedule", "set", "--bedtime", "25:00", "--wake", "07:00"], says: "--bedtime must be HH:mm, got '25:00'",
             usage: "schedule set"),
        Case(arguments: ["schedule", "set", "--bedtime", "23:00", "--wake", "07:00", "--weekend-bedtime", "00:30",
                         "--weekend-wake", "9"], says: "--weekend-wake must be HH:mm, got '9'", usage: "schedule set"),
        // A negative window is a value out of range, not a missing one (it read "Missing value").
        Case(arguments: ["schedule", "set", "--window", "-1"], says: "--window is 0 (off) … 120 minutes, got -1",
             usage: "schedule set"),
    ]

    @Test(arguments: usageErrors)
    func aWrongCallShowsThatCommandsUsage(_ c: Case) async throws {
        // A state directory the hub never used: the call must be judged before it is looked at.
        let state = CommandRunner.temporaryFile("never-ran")
        let stateOption = ["export", "schedule"].contains(c.arguments[0]) ? ["--state-dir", state.path] : []
        let r = try await CommandRunner.run(c.arguments + stateOption)
        #expect(r.status == 64, "stderr: \(r.stderr)")
        #expect(r.stderr.hasPrefix("Error: ") && r.stderr.contains(c.says), "stderr: \(r.stderr)")
        #expect(r.stderr.contains("Usage: podbridge \(c.usage!) "), "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("no database"), "the database was looked at first: \(r.stderr)")
    }

    /// `help` for a command this version lacks used to print the overview and exit 0.
    @Test func helpForACommandThatIsNotThereSaysSo() async throws {
        let top = try await CommandRunner.run(["help", "sleep"])
        #expect(top.status == 64 && top.stdout.isEmpty, "\(top.stdout)\(top.stderr)")
        #expect(top.stderr == "Error: 'podbridge' has no command 'sleep' (see 'podbridge --help')\n", "\(top.stderr)")
        let nested = try await CommandRunner.run(["help", "schedule", "push"])
        #expect(nested.status == 64, "\(nested.stdout)\(nested.stderr)")
        #expect(nested.stderr.contains("'podbridge schedule' has no command 'push' (see 'podbridge schedule --help')"), "\(nested.stderr)")
        let known = try await CommandRunner.run(["help", "schedule", "set"])
        #expect(known.status == 0 && known.stdout.contains("USAGE: podbridge schedule set"), "\(known.stdout)\(known.stderr)")
    }

    @Test func aConfigurationThatIsNotJSONIsNamedWithWhereWithoutUsage() async throws {
        // A comma missing at the end of the second line: the error points at the third.
        let r = try await runWithConfiguration("{\n  \"timeZone\": \"UTC\"\n  \"stateDirectory\": \"/tmp\"\n}\n", ["export", "--all"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(r.stderr.contains(": not valid JSON: ") && r.stderr.contains("(line 3, column 3)"), "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("NSCocoaErrorDomain") && !r.stderr.contains("Usage"), "stderr: \(r.stderr)")
    }

    @Test(arguments: [
        (#"{"mqtt": {"port": "1883"}}"#, "mqtt.port: expected a whole number"),
        (#"{"api": {"enabled": 1}}"#, "api.enabled: expected true or false"),
        (#"{"schedule": {"podTimeZone": 7}}"#, "schedule.podTimeZone: expected a string"),
        // A name that is not one of the setting's: the names it takes, not the Swift type's.
        (#"{"schedule": {"inference": {"bedtimeSource": "pillow"}}}"#,
         "schedule.inference.bedtimeSource: expected one of sessionStart, sleepOnset, got 'pillow'"),
    ])
    func aValueOfTheWrongKindIsNamedByItsKey(_ json: String, _ says: String) async throws {
        let r = try await runWithConfiguration(json, ["export", "--all"])
        #expect(r.status == 1, "stderr: \(r.stderr)")
        #expect(r.stderr.contains(says), "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("DecodingError") && !r.stderr.contains("Usage"), "stderr: \(r.stderr)")
    }

    static let failures: [Case] = [
        Case(arguments: ["sync"], says: "no backend: pass --url or set upload.baseURL", usage: nil),
        Case(arguments: ["sync", "--url", "not a url"], says: "not a url", usage: nil),
        Case(arguments: ["simulate", "--replay", "/nonexistent/night.cap"], says: "--replay /nonexistent/night.cap: cannot read",
             usage: nil),
        Case(arguments: ["export", "--all"], says: "no database at", usage: nil),
        Case(arguments: ["schedule", "show"], says: "no database at", usage: nil),
        Case(arguments: ["stream", "--path", "/dev/null", "--record", "/nonexistent-dir/night.cap"],
             says: "cannot write the capture /nonexistent-dir/night.cap: No such file or directory", usage: nil),
    ]

    @Test(arguments: failures)
    func aCommandThatCannotDoItsWorkSaysWhyWithoutUsage(_ c: Case) async throws {
        let state = CommandRunner.temporaryFile("never-ran")
        defer { try? FileManager.default.removeItem(at: state) }
        let stateOption = ["export", "schedule", "sync"].contains(c.arguments[0]) ? ["--state-dir", state.path] : []
        let r = try await CommandRunner.run(c.arguments + stateOption)
        #expect(r.status == 1, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stderr.hasPrefix("Error: ") && r.stderr.contains(c.says), "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("Usage"), "stderr: \(r.stderr)")
    }

    /// `schedule set --pod` before the hub ever ran (setting up the hub before the first
    /// night): the state directory and database are made, as the hub makes them, and `show`
    /// then finds the schedule.
    @Test func aScheduleSetForANamedPodBeforeTheHubEverRanIsKept() async throws {
        let state = CommandRunner.temporaryFile("new-hub").appendingPathComponent("state")
        defer { try? FileManager.default.removeItem(at: state.deletingLastPathComponent()) }
        let set = try await CommandRunner.run(["schedule", "set", "--state-dir", state.path, "--pod", "POD-0042",
                                               "--side", "left", "--bedtime", "23:15", "--wake", "06:45", "--tz", "UTC"])
        #expect(set.status == 0, "stdout: \(set.stdout)\nstderr: \(set.stderr)")
        #expect(FileManager.default.fileExists(atPath: state.appendingPathComponent("podbridge.sqlite").path))
        let show = try await CommandRunner.run(["schedule", "show", "--state-dir", state.path, "--side", "left", "--tz", "UTC"])
        #expect(show.status == 0, "stderr: \(show.stderr)")
        #expect(show.stdout.contains("23:15") && show.stdout.contains("06:45"), "stdout: \(show.stdout)")
    }

    /// The configuration's time zone is the schedule's when the command line names none (the
    /// machine's was used, so a hub on UTC configured for Berlin showed UTC); and a `set` that
    /// is refused leaves nothing behind (its --window was stored before the bedtime was
    /// refused).
    @Test func scheduleCommandsUseTheConfiguredZoneAndARefusedSetChangesNothing() async throws {
        let dir = CommandRunner.temporaryFile("zone-hub")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let config = dir.appendingPathComponent("config.json")
        try #"{"stateDirectory": "\#(dir.path)/state", "timeZone": "Asia/Kolkata"}"#.write(to: config, atomically: true, encoding: .utf8)
        let set = try await CommandRunner.run(["schedule", "set", "--config", config.path, "--pod", "POD-ZONE",
                                               "--side", "left", "--bedtime", "23:15", "--wake", "06:45"])
        #expect(set.status == 0, "stdout: \(set.stdout)\nstderr: \(set.stderr)")
        let show = try await CommandRunner.run(["schedule", "show", "--config", config.path, "--side", "left"])
        #expect(show.status == 0 && show.stdout.contains("(times in Asia/Kolkata)"), "stdout: \(show.stdout)\nstderr: \(show.stderr)")

        let refused = try await CommandRunner.run(["schedule", "set", "--config", config.path, "--side", "left",
                                                   "--window", "30", "--bedtime", "07:00", "--wake", "07:00"])
        // A usage error now, refused before the database is opened (UserMistakeCommandTests).
        #expect(refused.status == 64 && refused.stderr.contains("bedtime and wake are both 07:00"),
                "stdout: \(refused.stdout)\nstderr: \(refused.stderr)")
        let after = try await CommandRunner.run(["schedule", "show", "--config", config.path, "--side", "left"])
        #expect(!after.stdout.contains("30-min window") && after.stdout.contains("23:15"), "stdout: \(after.stdout)")
    }

    func runWithConfiguration(_ json: String, _ arguments: [String]) async throws -> CommandRunner.Outcome {
        let file = CommandRunner.temporaryFile("config.json")
        try json.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await CommandRunner.run(arguments + ["--config", file.path])
    }
}
