import Foundation
import Testing
import TestSupport

/// `podbridge analyze --beats` as a user runs it: a beats file is one stay in bed, kept by the
/// same shortest-session rule as a stay found from presence.
@Suite struct AnalyzeBeatsCommandTests {
    /// A beats CSV of `minutes` at about 60 bpm.
    static func beatsFile(minutes: Double) throws -> URL {
        var t = 1_700_000_000.0
        let lines = (0..<Int(minutes * 60)).map { i -> String in
            t += 1 + 0.02 * sin(Double(i) / 5)
            return String(format: "%.3f", t)
        }
        let file = CommandRunner.temporaryFile("beats.csv")
        try Data((["beat_time"] + lines).joined(separator: "\n").utf8).write(to: file)
        return file
    }

    @Test func aBeatsFileShorterThanTheShortestSessionIsNoNightAndSaysWhy() async throws {
        let file = try Self.beatsFile(minutes: 5)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await CommandRunner.run(["analyze", "--beats", file.path, "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("no session: the beats span 5.5 min, shorter than the shortest session kept (15 min"),
                "\(r.stdout)")
        #expect(!r.stdout.contains("session 1"), "\(r.stdout)")
    }

    @Test func theShortestSessionIsTheUsersToSet() async throws {
        let file = try Self.beatsFile(minutes: 5)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await CommandRunner.run(["analyze", "--beats", file.path, "--tz", "UTC", "--min-session", "5"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("session 1: 2023-11-14 22:13 – 2023-11-14 22:18 "), "\(r.stdout)")
    }

    @Test func aBeatsFileOfANightIsOneSession() async throws {
        let file = try Self.beatsFile(minutes: 40)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await CommandRunner.run(["analyze", "--beats", file.path, "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("session 1: "), "\(r.stdout)")
        #expect(!r.stdout.contains("no session"), "\(r.stdout)")
    }
}
