import Foundation
import Testing

/// `podbridge run` as a person starts it in a terminal, and as systemd starts it: each of the
/// hub's messages is said once, on the console or (without one) in the log.
@Suite struct RunConsoleCommandTests {
    /// The hub pointed at a pod that is not there (a wrong `--path`, the pod unplugged): it
    /// warns and keeps retrying until stopped.
    func runWithoutThePod(_ extra: [String]) async throws -> CommandRunner.Outcome {
        let config = CommandRunner.temporaryFile("config.json")
        try "{}".write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let state = CommandRunner.temporaryFile("state")
        defer { try? FileManager.default.removeItem(at: state) }
        return try await CommandRunner.runUntilStopped(
            ["run", "--config", config.path, "--state-dir", state.path, "--path", state.path + "/no-pod", "--no-api",
             "--tz", "UTC"] + extra) { out, err in (out + err).contains(CommandRunner.missingPod) }
    }

    static func count(_ text: String) -> Int { text.components(separatedBy: CommandRunner.missingPod).count - 1 }

    @Test func inATerminalAWarningIsPrintedOnceOnTheConsole() async throws {
        let r = try await runWithoutThePod([])
        #expect(r.status == 0, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stdout.contains("warning: \(CommandRunner.missingPod): open(")
                && r.stdout.contains("the hub keeps retrying"), "stdout: \(r.stdout)")
        #expect(Self.count(r.stdout) == 1, "stdout: \(r.stdout)")
        #expect(Self.count(r.stderr) == 0, "the log said it again: \(r.stderr)")
    }

    @Test func withoutAPathItSaysWhichPodItLooksForThroughUdev() async throws {
        let config = CommandRunner.temporaryFile("config.json")
        try #"{"pod": {"usbProductID": "5051"}}"#.write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let state = CommandRunner.temporaryFile("state")
        defer { try? FileManager.default.removeItem(at: state) }
        let r = try await CommandRunner.runUntilStopped(
            ["run", "--config", config.path, "--state-dir", state.path, "--no-api", "--tz", "UTC"]) { out, _ in
            out.contains("looking for")
        }
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.contains("looking for a pod with USB id 1209:5051 (udev, rescanning every"), "stdout: \(r.stdout)")
    }

    @Test func withoutAConsoleTheWarningGoesToTheLogOnce() async throws {
        let r = try await runWithoutThePod(["--no-console"])
        #expect(r.status == 0, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stdout.isEmpty, "stdout: \(r.stdout)")
        #expect(Self.count(r.stderr) == 1 && r.stderr.contains("warning"), "stderr: \(r.stderr)")
    }
}
