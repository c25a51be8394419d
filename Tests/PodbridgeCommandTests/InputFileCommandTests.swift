import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Input files as a Unix user names them: a pipe (`/dev/stdin`, a shell's `<(…)`, a FIFO) is
/// read like a file, and a path that cannot be read says why.
@Suite struct InputFileCommandTests {
    static let vitals = "time,heart_rate\n" + (0..<(20 * 60)).map { "\(1_700_000_000 + $0),60" }.joined(separator: "\n") + "\n"

    /// A FIFO in a fresh directory, with `text` written into it from another thread once the
    /// command opens it for reading. A command that closes it unread makes the write fail
    /// (EPIPE, not SIGPIPE: that would end the whole test process).
    static func fifo(holding text: String) throws -> URL {
        signal(SIGPIPE, SIG_IGN)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-fifo-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("vitals.csv")
        #expect(mkfifo(path.path, 0o600) == 0)
        let data = Data(text.utf8)
        Thread {
            guard let handle = FileHandle(forWritingAtPath: path.path) else { return }
            try? handle.write(contentsOf: data)
            try? handle.close()
        }.start()
        return path
    }

    /// Lets the writer go if the command never opened the FIFO, then removes it.
    static func remove(_ fifo: URL) {
        let fd = open(fifo.path, O_RDONLY | O_NONBLOCK)
        if fd >= 0 { close(fd) }
        try? FileManager.default.removeItem(at: fifo.deletingLastPathComponent())
    }

    @Test func aVitalsFileArrivingThroughAPipeIsAnalysed() async throws {
        let fifo = try Self.fifo(holding: Self.vitals)
        defer { Self.remove(fifo) }
        let r = try await CommandRunner.run(["analyze", "--vitals", fifo.path, "--tz", "UTC", "--min-session", "5"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("session 1: 2023-11-14 22:13 – 2023-11-14 22:33 "), "\(r.stdout)")
    }

    @Test func inspectReadsAPipeToo() async throws {
        let fifo = try Self.fifo(holding: "not a capture")
        defer { Self.remove(fifo) }
        let r = try await CommandRunner.run(["inspect", fifo.path])
        #expect(r.status != 0)
        #expect(r.stderr.contains("not a podbridge capture"), "\(r.stderr)")
    }

    @Test func aPathThatCannotBeReadSaysWhy() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("podbridge-dir-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("nothing.csv").path
        for (arguments, reason) in [(["analyze", "--vitals", missing], "\(missing): cannot read (no such file)"),
                                    (["analyze", "--beats", dir.path], "\(dir.path): cannot read (it is a directory)"),
                                    (["analyze", "--capture", missing], "\(missing): cannot read (no such file)"),
                                    (["inspect", dir.path], "\(dir.path): cannot read (it is a directory)")] {
            let r = try await CommandRunner.run(arguments)
            #expect(r.status == 1, "\(arguments)")
            #expect(r.stderr.contains(reason), "\(arguments): \(r.stderr)")
        }
        let r = try await CommandRunner.run(["simulate", "--replay", missing])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--replay \(missing): cannot read (no such file)"), "\(r.stderr)")
    }
}
