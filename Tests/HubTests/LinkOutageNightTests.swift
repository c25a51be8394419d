import Foundation
@testable import Hub
import SleepAnalysis
import SleepDomain
import SleepStore
import Testing

/// A night during which the pod's link was down for an hour, from the session tracker to the
/// stored night: the hour is in the night's time in bed but has no stage, so the store's
/// stage blocks leave a gap there and the outage adds nothing to WASO or the awake minutes.
@Suite struct LinkOutageNightTests {
    /// A still sleeper at 1 Hz with a slow heart-rate wander (something to stage by).
    static func seconds(from start: Double, count: Int) -> [SecondVitals] {
        (0..<count).map { i in
            let t = start + Double(i)
            return SecondVitals(time: t, heartRate: .value(54 + 2 * sin(t / 400)), breathingRate: .value(13),
                                movement: 0, present: true, quality: 1)
        }
    }

    @Test func anHourWithoutDataIsAGapInTheStoredNightNotAnAwakening() async throws {
        let start = 1_794_866_400.0
        var tracker = SessionTracker(rules: .init(maxGap: 600, preliminaryEvery: 1e9))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: start, count: 90 * 60)))
        _ = tracker.add(FrontEndOutput(seconds: Self.seconds(from: start + 150 * 60, count: 90 * 60)))
        let flushed = tracker.flush()
        let night = try #require(flushed)
        let session = try #require(SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!).analyze(night.input).first)
        let record = NightRecordMapping.record(session, podSerial: "OUTAGE", side: .left)

        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("podbridge.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        _ = try await store.save(record)
        let saved = try #require(try await store.session(sourceID: record.sourceID))
        let m = saved.metrics
        #expect(m.timeInBedMinutes == 240)
        #expect(m.awakeMinutes + m.coreMinutes + m.deepMinutes + m.remMinutes == 180)
        #expect(m.wasoMinutes < 5 && m.awakeMinutes < 5, "WASO \(m.wasoMinutes), awake \(m.awakeMinutes)")
        #expect(m.efficiency > 95)

        let outage = Int64(start) + 90 * 60..<Int64(start) + 150 * 60
        let blocks = try await store.blocks(sessionID: saved.id)
        #expect(blocks.first?.stage == .inBed && blocks.first?.durationSeconds == 240 * 60)
        let staged = blocks.dropFirst()
        #expect(!staged.isEmpty)
        #expect(staged.allSatisfy { $0.end <= outage.lowerBound || $0.start >= outage.upperBound },
                "a stage block covers the outage: \(staged.map { ($0.stage, $0.start - Int64(start), $0.end - Int64(start)) })")
        #expect(staged.contains { $0.end == outage.lowerBound } && staged.contains { $0.start == outage.upperBound })
        try store.close()
    }
}
