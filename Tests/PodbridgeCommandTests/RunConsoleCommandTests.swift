import Foundation
import Testing
import TestSupport

/// `podbridge run` as a person starts it in a terminal, and as systemd starts it: each of the
/// hub's messages is said once, on the console or (without one) in the log.
@Suite struct RunConsoleCommandTests {
    /// The hub pointed at a pod that is not there (a wrong `--path`, the pod unplugged): it
    /// warns and keeps retrying until stopped.
    func runWithoutThePod(_ extra: [String], launcher: [String] = []) async throws -> CommandRunner.Outcome {
        let config = CommandRunner.temporaryFile("config.json")
        try "{}".write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        let state = CommandRunner.temporaryFile("state")
        defer { try? FileManager.default.removeItem(at: state) }
        return try await CommandRunner.runUntilStopped(
            ["run", "--config", config.path, "--state-dir", state.path, "--path", state.path + "/no-pod", "--no-api",
             "--tz", "UTC"] + extra, launcher: launcher) { out, err in (out + err).contains(CommandRunner.missingPod) }
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

    /// systemd stopping a hub that has just started (a restart, a shutdown at boot): SIGTERM a few
    /// milliseconds after its services started used to kill it with the signal (status 143)
    /// before the service group's own signal sources took hold, every time in a shell loop.
    /// A closed terminal or a dropped ssh session (SIGHUP) stops a hub run by hand the same
    /// way; it used to kill it (status 129), its open night unsaved.
    @Test(arguments: [SIGTERM, SIGHUP]) func aHubStoppedTheMomentItsServicesStartStopsCleanly(_ signal: Int32) async throws {
        let config = CommandRunner.temporaryFile("config.json")
        try #"{"pod": {"usbProductID": "5051"}}"#.write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        for attempt in 1...5 {
            let state = CommandRunner.temporaryFile("state")
            defer { try? FileManager.default.removeItem(at: state) }
            let hub = try CommandRunner.Launched(["run", "--config", config.path, "--state-dir", state.path, "--no-api",
                                                  "--tz", "UTC"], product: "podbridge")
            // Watched closely (the runner's polls are 100 ms apart, longer than the gap was).
            let deadline = ContinuousClock.now + .seconds(120)
            while hub.process.isRunning, !hub.stdout.contains("looking for"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            kill(hub.process.processIdentifier, signal)
            #expect(try await hub.exited(within: 60), "attempt \(attempt): the hub did not stop")
            let how = hub.process.terminationReason == .uncaughtSignal ? "killed by signal" : "exit status"
            #expect(hub.process.terminationReason == .exit && hub.process.terminationStatus == 0,
                    "attempt \(attempt): \(how) \(hub.process.terminationStatus); stdout: \(hub.stdout)")
            #expect(hub.stdout.contains("hub stopped"), "attempt \(attempt): stdout: \(hub.stdout)")
        }
    }

    @Test func withoutAConsoleTheWarningGoesToTheLogOnce() async throws {
        let r = try await runWithoutThePod(["--no-console"])
        #expect(r.status == 0, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        #expect(r.stdout.isEmpty, "stdout: \(r.stdout)")
        #expect(Self.count(r.stderr) == 1 && r.stderr.contains("warning"), "stderr: \(r.stderr)")
    }

    /// Under systemd (standard error is the journal's stream, named by JOURNAL_STREAM), each
    /// line carries its priority for journald and no timestamp of its own: every line was
    /// stored at priority info, so `journalctl -p warning` showed none of the warnings.
    @Test func underSystemdEachLogLineCarriesItsPriorityForTheJournal() async throws {
        // As systemd does: JOURNAL_STREAM names the stream by device and inode.
        let journal = ["/bin/sh", "-c", #"JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@""#]
        // No --log-level: under the journal the hub logs at info (the unit passes none).
        let r = try await runWithoutThePod(["--no-console"], launcher: journal)
        #expect(r.status == 0, "stdout: \(r.stdout)\nstderr: \(r.stderr)")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        let warning = lines.filter { $0.contains(CommandRunner.missingPod) }
        #expect(warning.count == 1 && warning[0].hasPrefix("<4>podbridge: "), "stderr: \(r.stderr)")
        #expect(lines.contains { $0.hasPrefix("<6>podbridge: [Hub] using the pod at ") }, "stderr: \(r.stderr)")
        #expect(lines.allSatisfy { $0.range(of: #"^<[0-7]>podbridge: "#, options: .regularExpression) != nil }, "stderr: \(r.stderr)")
        // A stream that is not the journal's (a redirected child keeps the variable): plain lines.
        let elsewhere = try await runWithoutThePod(["--no-console"], launcher: ["/usr/bin/env", "JOURNAL_STREAM=1:1"])
        #expect(elsewhere.stderr.contains("warning") && !elsewhere.stderr.contains("<4>"), "stderr: \(elsewhere.stderr)")
        #expect(!elsewhere.stderr.contains("using the pod at"), "a terminal's log is warnings and up: \(elsewhere.stderr)")
    }

    /// The log level is a setting like any other (a unit's command line is not for users to
    /// edit): from the environment it quietens the journal, and a wrong one is named.
    @Test func theLogLevelComesFromTheConfigurationToo() async throws {
        let journal = ["/usr/bin/env", "PODBRIDGE_LOG_LEVEL=warning", "/bin/sh", "-c",
                       #"JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@""#]
        let quiet = try await runWithoutThePod(["--no-console"], launcher: journal)
        #expect(quiet.status == 0 && quiet.stderr.contains("<4>podbridge: "), "stderr: \(quiet.stderr)")
        #expect(!quiet.stderr.contains("<6>"), "stderr: \(quiet.stderr)")
        // The option still wins over the environment.
        let loud = try await runWithoutThePod(["--no-console", "--log-level", "info"],
                                              launcher: ["/usr/bin/env", "PODBRIDGE_LOG_LEVEL=error"])
        #expect(loud.stderr.contains("using the pod at"), "stderr: \(loud.stderr)")
        let wrong = try await CommandRunner.run(["run", "--no-api", "--path", "/nonexistent"],
                                                environment: ["PODBRIDGE_LOG_LEVEL": "verbose"])
        #expect(wrong.status == 1 && wrong.stderr.contains("logLevel (from $PODBRIDGE_LOG_LEVEL)")
                && wrong.stderr.contains("'verbose'"), "status \(wrong.status), stderr: \(wrong.stderr)")
    }
}
