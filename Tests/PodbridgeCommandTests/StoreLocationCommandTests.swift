import Foundation
import Testing
import TestSupport

/// A command that reads the hub's database, run where the hub never stored anything: the
/// error says where it looked and how to point at the hub's state.
@Suite struct StoreLocationCommandTests {
    @Test(arguments: [["export", "--all"], ["schedule", "show"]])
    func aMissingDatabaseIsNamedWithWhereItWasLookedForAndHowToPointElsewhere(_ command: [String]) async throws {
        let state = CommandRunner.temporaryFile("never-ran")
        let r = try await CommandRunner.run(command + ["--state-dir", state.path])
        #expect(r.status == 1, "\(r.stdout)")
        #expect(r.stderr.contains("no database at \(state.path)/podbridge.sqlite"), "\(r.stderr)")
        #expect(r.stderr.contains("--config FILE"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: state.path), "the command created \(state.path)")
    }

    /// A database the user may not reach (the hub run by systemd keeps its state directory
    /// root's alone) is named as such: it read "no database … the hub has stored nothing there".
    @Test func aDatabaseBehindADirectoryTheUserMayNotEnterIsNamedAsSuch() async throws {
        let state = CommandRunner.temporaryFile("private")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: state.path)
                try? FileManager.default.removeItem(at: state) }
        _ = FileManager.default.createFile(atPath: state.appendingPathComponent("podbridge.sqlite").path, contents: Data())
        var launcher: [String] = []
        if getuid() == 0 {
            // Root enters any directory through its DAC capabilities: without them it is refused a
            // directory another user owns, as the user is refused /var/lib/private.
            try FileManager.default.setAttributes([.ownerAccountID: 65534, .posixPermissions: 0o700], ofItemAtPath: state.path)
            launcher = ["/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: state.path)
        }
        for command in [["export", "--all"], ["schedule", "show"]] {
            let r = try await CommandRunner.run(command + ["--state-dir", state.path], launcher: launcher)
            #expect(r.status == 1, "\(r.stdout)")
            #expect(r.stderr.contains("cannot read the database \(state.path)/podbridge.sqlite: permission denied"), "\(r.stderr)")
            #expect(r.stderr.contains("sudo") && !r.stderr.contains("no database"), "\(r.stderr)")
        }
    }

    /// The hub makes the database's directory when `--db` (or `database`) puts the file
    /// somewhere that is not there yet, and no state directory it would leave empty: the
    /// exports go beside the database.
    @Test func theHubMakesTheDirectoryOfADatabaseGivenElsewhere() async throws {
        let root = CommandRunner.temporaryFile("elsewhere")
        defer { try? FileManager.default.removeItem(at: root) }
        let config = CommandRunner.temporaryFile("config.json")
        try "{}".write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let database = root.appendingPathComponent("db/podbridge.sqlite").path
        let r = try await CommandRunner.runUntilStopped(
            ["run", "--config", config.path, "--state-dir", root.appendingPathComponent("state").path, "--db", database,
             "--path", root.appendingPathComponent("no-pod").path, "--no-api", "--tz", "UTC"]
        ) { out, _ in out.contains(CommandRunner.missingPod) }
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("database \(database)"), "stdout: \(r.stdout)")
        #expect(FileManager.default.fileExists(atPath: database))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("state").path), "an unused state directory was made")
    }

    @Test func aFileThatIsNoDatabaseIsNamedAsSuch() async throws {
        let file = CommandRunner.temporaryFile("notes.txt")
        try "somebody's notes\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await CommandRunner.run(["export", "--all", "--db", file.path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(file.path) is not a podbridge database"), "stderr: \(r.stderr)")
        #expect(try String(contentsOf: file, encoding: .utf8) == "somebody's notes\n")
    }
}
