import Foundation
import SleepStore
import Synchronization
import SleepDomain

/// A clock the test sets by hand.
final class ManualClock: WallClock {
    private let current: Mutex<Int64>
    init(_ start: Int64) { current = Mutex(start) }
    func now() -> Date { Date(timeIntervalSince1970: TimeInterval(current.withLock { $0 })) }
    func advance(by seconds: Int64) { current.withLock { $0 += seconds } }
}

/// A fresh temporary directory, removed by `cleanup()`.
struct TempDir {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sleepstore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

enum Fixtures {
    /// Unix seconds of a UTC wall time.
    static func utc(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int = 0) -> Int64 {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: "UTC")!
        return Int64(cal.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi))!.timeIntervalSince1970)
    }

    /// Unix seconds of a local wall time in `zone`.
    static func local(_ zone: String, _ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int = 0) -> Int64 {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = TimeZone(identifier: zone)!
        return Int64(cal.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi))!.timeIntervalSince1970)
    }

    /// A night whose epochs follow `stages` (stage, number of 30-s epochs) from `start`,
    /// with metrics derived from the counts. The session ends with the last epoch.
    static func night(
        serial: String = "PB-0001", side: BedSide = .left, start: Int64,
        stages: [(SleepStage, Int)], preliminary: Bool = false, heartRate: Double = 58
    ) -> NightRecord {
        var epochs: [EpochRecord] = []
        var t = start
        for (stage, count) in stages {
            for i in 0..<count {
                epochs.append(EpochRecord(
                    start: t, stage: stage,
                    probabilities: StageProbabilities(
                        awake: stage == .awake ? 0.7 : 0.1, core: stage == .core ? 0.7 : 0.1,
                        deep: stage == .deep ? 0.7 : 0.1, rem: stage == .rem ? 0.7 : 0.1),
                    heartRate: heartRate + Double(i % 3), hrvRMSSD: 42.5, breathingRate: 14.25,
                    movement: stage == .awake ? 0.5 : 0.0))
                t += 30
            }
        }
        return NightRecord(
            podSerial: serial, side: side, start: start, end: t, epochs: epochs,
            metrics: metrics(for: stages), isPreliminary: preliminary)
    }

    static func metrics(for stages: [(SleepStage, Int)]) -> NightMetrics {
        func minutes(_ s: SleepStage) -> Double { Double(stages.filter { $0.0 == s }.map(\.1).reduce(0, +)) / 2 }
        let tib = Double(stages.map(\.1).reduce(0, +)) / 2
        let tst = tib - minutes(.awake)
        func pct(_ m: Double) -> Double { tib > 0 ? (m / tib * 1000).rounded() / 10 : 0 }
        return NightMetrics(
            timeInBedMinutes: tib, totalSleepMinutes: tst, efficiency: pct(tst),
            onsetLatencyMinutes: stages.first?.0 == .awake ? Double(stages[0].1) / 2 : 0,
            wasoMinutes: 0, awakenings: stages.dropFirst().filter { $0.0 == .awake }.count,
            awakeMinutes: minutes(.awake), coreMinutes: minutes(.core), deepMinutes: minutes(.deep), remMinutes: minutes(.rem),
            awakePercent: pct(minutes(.awake)), corePercent: pct(minutes(.core)),
            deepPercent: pct(minutes(.deep)), remPercent: pct(minutes(.rem)),
            meanHeartRate: 58.5, meanHRV: 42.5, meanBreathingRate: 14.25, score: 81)
    }

    /// A typical 8-hour night (960 epochs) starting at `start`.
    static func fullNight(serial: String = "PB-0001", side: BedSide = .left, start: Int64) -> NightRecord {
        night(serial: serial, side: side, start: start, stages: [
            (.awake, 30), (.core, 120), (.deep, 90), (.core, 100), (.rem, 60), (.awake, 10),
            (.core, 150), (.deep, 60), (.rem, 80), (.core, 160), (.rem, 70), (.awake, 30),
        ])
    }
}
