import Foundation

/// The `podbridge` executable built beside the test bundle, run as a user runs it (the
/// command, daemon and sync suites share it).
public struct CommandRunner {
    public struct Outcome: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// What a hub pointed at a pod that is not there warns once its services run (its SIGTERM
    /// handler installed): tests that stop such a hub wait for it, not for "database …", which
    /// comes before the handler, so a SIGTERM then ends the hub with status 15.
    public static let missingPod = "cannot open the pod"

    public static func podbridge(_ product: String = "podbridge") -> URL? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent(product)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// A started command, its output going to files (a pipe could fill up and stall it) in a
    /// directory of its own, with no standard input.
    public final class Launched {
        public let process = Process()
        public let command: String
        private let dir: URL, out: URL, err: URL

        /// - Parameters:
        ///   - environment: variables set for the command on top of the tests' own.
        ///   - launcher: a command that runs the binary (e.g. `setpriv` with its options), or none.
        public init(_ arguments: [String], product: String = "podbridge", environment: [String: String] = [:], launcher: [String] = []) throws {
            guard let binary = CommandRunner.podbridge(product) else { throw RunnerError("\(product) must be built beside the tests") }
            command = "\(product) \(arguments.joined(separator: " "))"
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-cmd-\(UUID())")
            out = dir.appendingPathComponent("out")
            err = dir.appendingPathComponent("err")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: out.path, contents: nil)
            _ = FileManager.default.createFile(atPath: err.path, contents: nil)
            if let tool = launcher.first {
                process.executableURL = URL(fileURLWithPath: tool)
                process.arguments = launcher.dropFirst() + [binary.path] + arguments
            } else {
                process.executableURL = binary
                process.arguments = arguments
            }
            if !environment.isEmpty {
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = try FileHandle(forWritingTo: err)
            try process.run()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(at: dir)
        }

        public var stdout: String { (try? String(contentsOf: out, encoding: .utf8)) ?? "" }
        public var stderr: String { (try? String(contentsOf: err, encoding: .utf8)) ?? "" }
        public var outcome: Outcome { Outcome(status: process.terminationStatus, stdout: stdout, stderr: stderr) }

        /// Waits for the command's end; false if it is still running after `seconds`.
        public func exited(within seconds: Double) async throws -> Bool {
            try await Self.poll(seconds: seconds) { !process.isRunning }
        }

        /// Polls `condition` while the command runs, and once more after: true as soon as it holds.
        /// The bound is `seconds` of wall time *and* that many seconds' worth of looks. A test's
        /// task can be starved for minutes on two cores while the parallel pass runs synchronous
        /// analysis on the cooperative pool (CI saw 100 s); the command's output arrived meanwhile,
        /// and a poller that woke past a wall-clock deadline and gave up without looking failed
        /// six tests there.
        public func printed(within seconds: Double, _ condition: (_ stdout: String, _ stderr: String) -> Bool) async throws -> Bool {
            try await Self.poll(seconds: seconds) { condition(stdout, stderr) || !process.isRunning }
            return condition(stdout, stderr)
        }

        @discardableResult
        private static func poll(seconds: Double, _ done: () -> Bool) async throws -> Bool {
            let interval = 0.1, looks = Int(seconds / interval)
            let deadline = ContinuousClock.now + .seconds(seconds)
            var looked = 0
            while !done() {
                if looked >= looks, ContinuousClock.now >= deadline { return done() }
                looked += 1
                try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
            }
            return true
        }
    }

    /// Runs `podbridge arguments…` (or another of the package's executables) to its end.
    public static func run(_ arguments: [String], product: String = "podbridge",
                    environment: [String: String] = [:], launcher: [String] = []) async throws -> Outcome {
        let launched = try Launched(arguments, product: product, environment: environment, launcher: launcher)
        // Generous: a loaded 2-core machine runs a debug build slowly.
        guard try await launched.exited(within: 300) else {
            launched.process.terminate()
            throw RunnerError("\(launched.command) did not finish")
        }
        return launched.outcome
    }

    /// Starts `podbridge arguments…` (a command that runs until stopped, such as `run`), stops it
    /// with SIGTERM once what it printed on either stream satisfies `until`, and returns what it
    /// printed. Throws when that output never came while it ran (within `seconds`, a bound for
    /// a stalled command, not a speed target): held in a buffer, or never printed.
    public static func runUntilStopped(_ arguments: [String], seconds: Double = 120, launcher: [String] = [],
                                until: (_ stdout: String, _ stderr: String) -> Bool) async throws -> Outcome {
        let launched = try Launched(arguments, product: "podbridge", launcher: launcher)
        let seen = try await launched.printed(within: seconds, until)
        if launched.process.isRunning { kill(launched.process.processIdentifier, SIGTERM) }
        guard try await launched.exited(within: 60) else { throw RunnerError("\(launched.command) did not stop on SIGTERM") }
        guard seen else {
            throw RunnerError("\(launched.command) did not print what was waited for while it ran; at its end it had printed:\n"
                              + "stdout: \(launched.stdout)\nstderr: \(launched.stderr)")
        }
        return launched.outcome
    }

    /// A fresh temporary file path with `name`.
    public static func temporaryFile(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-cmd-\(UUID())-\(name)")
    }
}

public struct RunnerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
