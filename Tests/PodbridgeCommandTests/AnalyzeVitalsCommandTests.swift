import Foundation
import Testing
import TestSupport

/// `podbridge analyze --vitals` with a hole in the data: kept across up to the longest hole
/// the user allows (`--max-data-gap`, else `sessions.maxDataGapMinutes`, else 3 h), as the hub
/// keeps a night across its link's outages.
@Suite struct AnalyzeVitalsCommandTests {
    /// 40 min in bed, 2 h without a row, 40 min in bed.
    static func vitalsWithAHole() throws -> URL {
        let start = 1_700_000_000
        let rows = (Array(0..<2400) + Array((2400 + 7200)..<(2400 + 7200 + 2400))).map { "\(start + $0),58,1" }
        let file = CommandRunner.temporaryFile("vitals.csv")
        try Data((["time,heart_rate,present"] + rows).joined(separator: "\n").utf8).write(to: file)
        return file
    }

    static func sessions(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").filter { $0.hasPrefix("session ") }.map { String($0.prefix(46)) }
    }

    @Test func impossibleHeartRatesAreSkippedAndSaidSoAndTheNightIsStillStaged() async throws {
        // An hour in bed at 58 bpm, with a sensor glitch every ten minutes reading 500 bpm.
        let start = 1_700_000_000
        let rows = (0..<3600).map { "\(start + $0),\($0 % 600 == 5 ? 500 : 58),1" }
        let file = CommandRunner.temporaryFile("vitals.csv")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data((["time,heart_rate,present"] + rows).joined(separator: "\n").utf8).write(to: file)
        let r = try await CommandRunner.run(["analyze", "--vitals", file.path, "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == "warning: \(file.path): 6 heart_rate values outside 30–200 bpm skipped (first on line 7)\n")
        #expect(Self.sessions(r.stdout) == ["session 1: 2023-11-14 22:13 – 2023-11-14 23:13"], "\(r.stdout)")
        #expect(r.stdout.contains("heart rate 58.0 bpm"), "the glitches reached the night's heart rate: \(r.stdout)")
    }

    @Test func aNightAcrossTheClockChangeShowsEachEndsOffset() async throws {
        // 2026-10-25 in Berlin: 03:00 CEST becomes 02:00 CET. Four hours in bed from 00:00 UTC
        // (02:00 CEST) end at 04:00 UTC, 05:00 CET: "02:00 – 05:00" alone would read three hours.
        let start = 1_792_886_400
        let rows = (0..<(4 * 3600)).map { "\(start + $0),58,1" }
        let file = CommandRunner.temporaryFile("vitals.csv")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data((["time,heart_rate,present"] + rows).joined(separator: "\n").utf8).write(to: file)
        let r = try await CommandRunner.run(["analyze", "--vitals", file.path, "--tz", "Europe/Berlin"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("session 1: 2026-10-25 02:00 +02:00 – 2026-10-25 05:00 +01:00 Europe/Berlin, wake date 2026-10-25"),
                "\(r.stdout)")
        // A night with one offset keeps the short form.
        let winter = try Self.vitalsWithAHole()
        defer { try? FileManager.default.removeItem(at: winter) }
        let oneOffset = try await CommandRunner.run(["analyze", "--vitals", winter.path, "--tz", "Europe/Berlin"])
        #expect(oneOffset.stdout.contains("session 1: 2023-11-14 23:13 – 2023-11-15 02:33 Europe/Berlin,"), "\(oneOffset.stdout)")
    }

    @Test func aTwoHourHoleIsKeptInTheNightByDefault() async throws {
        let file = try Self.vitalsWithAHole()
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await CommandRunner.run(["analyze", "--vitals", file.path, "--tz", "UTC"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.sessions(r.stdout) == ["session 1: 2023-11-14 22:13 – 2023-11-15 01:33"], "\(r.stdout)")
    }

    @Test func theLongestHoleIsTheUsersToSetOnTheCommandLineOrInTheConfiguration() async throws {
        let file = try Self.vitalsWithAHole()
        defer { try? FileManager.default.removeItem(at: file) }
        let split = ["session 1: 2023-11-14 22:13 – 2023-11-14 22:53", "session 2: 2023-11-15 00:53 – 2023-11-15 01:33"]
        let r = try await CommandRunner.run(["analyze", "--vitals", file.path, "--tz", "UTC", "--max-data-gap", "60"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.sessions(r.stdout) == split, "\(r.stdout)")

        let config = CommandRunner.temporaryFile("config.json")
        defer { try? FileManager.default.removeItem(at: config) }
        try Data(#"{"sessions": {"maxDataGapMinutes": 60}}"#.utf8).write(to: config)
        let configured = try await CommandRunner.run(["analyze", "--vitals", file.path, "--tz", "UTC", "--config", config.path])
        #expect(configured.status == 0, "\(configured.stderr)")
        #expect(Self.sessions(configured.stdout) == split, "\(configured.stdout)")
    }

    @Test(arguments: ["0", "-5", "nan"]) func aHoleThatIsNoLengthIsRefusedWithTheOptionNamed(_ minutes: String) async throws {
        let file = try Self.vitalsWithAHole()
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await CommandRunner.run(["analyze", "--vitals", file.path, "--max-data-gap=\(minutes)"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--max-data-gap takes minutes, a number above 0"), "\(r.stderr)")
    }
}
