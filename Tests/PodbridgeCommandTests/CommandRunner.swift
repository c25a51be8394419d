import Foundation

/// The `podbridge` executable built beside the test bundle, run as a user runs it.
struct CommandRunner {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func podbridge(_ product: String = "podbridge") -> URL? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent(product)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs `podbridge arguments…` (or another of the package's executables) to its end, with no stdin; output goes to files (a pipe
    /// could fill up and stall the child).
    static func run(_ arguments: [String], product: String = "podbridge") async throws -> Outcome {
        guard let binary = podbridge(product) else { throw RunnerError("\(product) must be built beside the tests") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-cmd-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out"), err = dir.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        // Generous: a loaded 2-core machine runs a debug build slowly.
        let deadline = ContinuousClock.now + .seconds(300)
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                process.terminate()
                throw RunnerError("podbridge \(arguments.joined(separator: " ")) did not finish")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return Outcome(status: process.terminationStatus,
                       stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                       stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// Starts `podbridge arguments…` (a command that runs until stopped, such as `run`), stops it
    /// with SIGTERM once what it printed on either stream satisfies `until`, and returns what it
    /// printed. Throws when that output never came while it ran (within `seconds`, a bound for
    /// a stalled command, not a speed target): held in a buffer, or never printed.
    static func runUntilStopped(_ arguments: [String], seconds: Double = 120,
                                until: (_ stdout: String, _ stderr: String) -> Bool) async throws -> Outcome {
        guard let binary = podbridge() else { throw RunnerError("podbridge must be built beside the tests") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-cmd-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("out"), err = dir.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        func read(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let deadline = ContinuousClock.now + .seconds(seconds)
        var seen = false
        while process.isRunning, ContinuousClock.now < deadline {
            if until(read(out), read(err)) { seen = true; break }
            try await Task.sleep(for: .milliseconds(100))
        }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let stopped = ContinuousClock.now + .seconds(60)
        while process.isRunning, ContinuousClock.now < stopped { try await Task.sleep(for: .milliseconds(50)) }
        let command = "podbridge \(arguments.joined(separator: " "))"
        guard !process.isRunning else { throw RunnerError("\(command) did not stop on SIGTERM") }
        guard seen else {
            throw RunnerError("\(command) did not print what was waited for while it ran; at its end it had printed:\n"
                              + "stdout: \(read(out))\nstderr: \(read(err))")
        }
        return Outcome(status: process.terminationStatus, stdout: read(out), stderr: read(err))
    }

    /// A fresh temporary file path with `name`.
    static func temporaryFile(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-cmd-\(UUID())-\(name)")
    }
}

struct RunnerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
