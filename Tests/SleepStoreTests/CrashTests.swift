import Foundation
import Testing
@testable import SleepStore

#if canImport(Glibc)
import Glibc
#endif

@Suite struct CrashTests {
    /// The helper executable built beside the test bundle.
    static func writerURL() -> URL? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("sleepstore-crash-writer")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    @Test func killNineWhileWritingLosesNoCommittedSession() async throws {
        let writer = try #require(Self.writerURL(), "sleepstore-crash-writer must be built beside the tests")
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("crash.sqlite")
        let process = Process()
        process.executableURL = writer
        process.arguments = [path, "100000"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()

        // Read announcements until enough sessions are committed, then kill -9 mid-write.
        var committed: [String] = []
        var buffer = ""
        let handle = pipe.fileHandleForReading
        while committed.count < 12 {
            let data = handle.availableData
            if data.isEmpty { break }  // the child ended early: the checks below report it
            buffer += String(decoding: data, as: UTF8.self)
            while let newline = buffer.firstIndex(of: "\n") {
                let line = String(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if line.hasPrefix("committed ") { committed.append(String(line.dropFirst("committed ".count))) }
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == SIGKILL)
        #expect(committed.count >= 12)

        let store = try NightStore(path: path, timeZone: TimeZone(identifier: "UTC")!)
        #expect(try await store.integrityCheck() == ["ok"])
        for id in committed {
            let session = try #require(try await store.session(sourceID: id), "committed session \(id) lost")
            #expect(try await store.epochs(sessionID: session.id).count == 960)
        }
        // Whatever else is there is whole: no session without its epochs, blocks and outbox event.
        for session in try await store.allSessions() {
            #expect(try await store.epochs(sessionID: session.id).count == 960)
            #expect(try await store.blocks(sessionID: session.id).first?.stage == .inBed)
        }
        #expect(try await store.outboxEvents().count == store.sessionCount())
    }
}
