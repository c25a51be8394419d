import Foundation
import Hub
import SleepStore
import Testing

/// Every command reads the configuration the daemon reads (file, environment, defaults),
/// so a user who ran the daemon never passes `--db`.
@Suite struct CommandConfigurationTests {
    @Test func theFileThenTheEnvironmentWinOverTheDefaults() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let file = dir.path("config.json")
        try #"{"stateDirectory": "/srv/pod", "timeZone": "Europe/Berlin", "upload": {"baseURL": "http://127.0.0.1:9"}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let missing = dir.path("no-such-system.json")

        let fromFile = try HubConfiguration.resolve(file: file, environment: [:], systemPath: missing)
        #expect(fromFile.databasePath == "/srv/pod/podbridge.sqlite")
        #expect(fromFile.upload.baseURL == "http://127.0.0.1:9")
        // The environment names the file when no option does, and overrides what it says.
        let fromEnvironment = try HubConfiguration.resolve(
            file: nil, environment: ["PODBRIDGE_CONFIG": file, "PODBRIDGE_DATABASE": "/tmp/x.sqlite"], systemPath: missing)
        #expect(fromEnvironment.timeZone == "Europe/Berlin")
        #expect(fromEnvironment.databasePath == "/tmp/x.sqlite")
        // The system file is read only when it exists and nothing else is named.
        #expect(try HubConfiguration.resolve(file: nil, environment: [:], systemPath: missing) == HubConfiguration())
        #expect(try HubConfiguration.resolve(file: nil, environment: [:], systemPath: file) == fromFile)
        #expect(throws: ConfigurationError.self) {
            try HubConfiguration.resolve(file: dir.path("absent.json"), environment: [:], systemPath: missing)
        }
    }

    /// Runs the `podbridge` binary; returns its exit status, standard output and error.
    static func podbridge(_ arguments: [String], environment: [String: String]) throws -> (Int32, String, String) {
        let binary = try #require(HubDaemonTests.podbridgeURL(), "podbridge must be built beside the tests")
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PODBRIDGE_") }
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    @Test func exportAndScheduleFindTheDaemonsDatabaseWithoutDb() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        // The daemon's state: a configuration file naming the state directory, a stored night.
        var config = HubConfiguration()
        config.stateDirectory = dir.path("state")
        config.timeZone = "UTC"
        try FileManager.default.createDirectory(atPath: config.stateDirectory, withIntermediateDirectories: true)
        let store = try NightStore(path: config.databasePath, timeZone: TimeZone(identifier: "UTC")!)
        try await storedNight(store, serial: "POD-CFG", side: .left, zone: "UTC", wakeDay: (2026, 11, 17), bed: (23, 0), wake: (7, 0))
        try await store.recordPod(serial: "POD-CFG", firmware: "1.0.0", seenAt: 1_794_900_000)
        try store.close()
        let file = dir.path("config.json")
        try #"{"stateDirectory": "\#(config.stateDirectory)", "timeZone": "UTC", "export": {"format": "csv"}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)

        // --config, and the same through PODBRIDGE_CONFIG: the night, in the configured format.
        for (arguments, environment) in [(["export", "--all", "--config", file], [String: String]()),
                                         (["export", "--all"], ["PODBRIDGE_CONFIG": file])] {
            let (status, out, err) = try Self.podbridge(arguments, environment: environment)
            #expect(status == 0, "stderr: \(err)")
            #expect(out.contains("2026-11-17"), "export printed: \(out)")
            #expect(!out.hasPrefix("{") && !out.hasPrefix("["), "expected CSV (export.format), got: \(out.prefix(80))")
        }
        // The state directory alone, from the environment, as under systemd.
        let (status, out, err) = try Self.podbridge(["schedule", "show"], environment: ["PODBRIDGE_STATE_DIRECTORY": config.stateDirectory])
        #expect(status == 0, "stderr: \(err)")
        #expect(out.contains("POD-CFG") || out.contains("left"), "schedule show printed: \(out)")
        // And a database that is not there is named, not created.
        let (missing, _, missingErr) = try Self.podbridge(["export", "--all"], environment: ["PODBRIDGE_STATE_DIRECTORY": dir.path("nowhere")])
        #expect(missing != 0)
        #expect(missingErr.contains(dir.path("nowhere")), "stderr: \(missingErr)")
    }
}
