import Foundation
import SleepDomain
import NightModel
import PodAnalysis
import PodProtocol
import SleepAnalysis
import Testing
import TestSupport

/// `podbridge analyze --capture` reads the file in chunks (`CaptureStreamAnalyzer`): its
/// sessions must be exactly those of the whole-file analysis.
@Suite struct AnalyzeCaptureCommandTests {
    @Test func theCommandStagesACaptureExactlyAsTheWholeFileAnalysisDoes() async throws {
        // 25 minutes, the left side occupied from the first second: about 6 MB, 6 chunks.
        let sleeper = SleeperProfile(getsIn: 0, getsOutBeforeEnd: 0, sleepOnsetLatency: 30, bathroomTrip: false)
        let config = NightConfig(seed: 51, duration: 25 * 60, sides: [SideConfig(sleeper: sleeper), .empty], channelsPerSide: 2)
        var sim = NightSimulator(config: config)
        var b = CaptureBuilder()
        let startMillis: Int64 = 1_750_026_600_000
        let t0 = UInt64(startMillis) * 1000
        try b.appendClockExchange(ClockAnchor(tick: 100, unixMillis: startMillis, utcOffsetMinutes: 0), requestID: 1,
                                  receivedMicros: t0)
        var tick: UInt64 = 0
        while tick < UInt64(config.duration * 500) {
            for side in 0..<2 {
                try b.append(.piezo(PiezoBlock(side: BedSide(wireValue: UInt8(side))!, channels: 2, gain: 16, firstTick: 100 + tick,
                                               samples: sim.piezo(side: side, count: 50))), receivedMicros: t0 + tick * 2000)
            }
            tick += 50
            if tick % 250 == 0 {
                for side in 0..<2 {
                    try b.append(.capacitance(CapacitanceReading(side: BedSide(wireValue: UInt8(side))!, tick: 100 + tick,
                                                                 values: sim.capacitance(side: side, at: Double(tick) / 500))),
                                 receivedMicros: t0 + tick * 2000)
                }
            }
        }
        let capture = CommandRunner.temporaryFile("night.podcap")
        let json = CommandRunner.temporaryFile("sessions.json")
        try Data(b.bytes).write(to: capture)
        defer {
            try? FileManager.default.removeItem(at: capture)
            try? FileManager.default.removeItem(at: json)
        }
        #expect(b.bytes.count > 3 << 20, "the capture must span several of the command's 1 MiB reads")

        let r = try await CommandRunner.run(["analyze", "--capture", capture.path, "--side", "left", "--tz", "UTC",
                                             "--min-session", "5", "--json", json.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("session 1:"), "\(r.stdout)")

        let whole = try CaptureAnalysis(capture: b.bytes)
        let sessions = SleepAnalyzer(rules: SessionRules(maxGap: 20 * 60, minDuration: 5 * 60),
                                     timeZone: TimeZone(identifier: "UTC")!)
            .analyze(beats: whole.left.beats, vitals: whole.left.vitals)
        #expect(sessions.count == 1)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        #expect(try Data(contentsOf: json) == encoder.encode(sessions))
    }
}
