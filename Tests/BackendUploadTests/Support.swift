import Foundation
import SleepStore
import Synchronization
import BackendUpload
import SleepDomain

/// A clock the test sets by hand.
final class ManualClock: WallClock {
    private let current: Mutex<Int64>
    init(_ start: Int64) { current = Mutex(start) }
    func now() -> Date { Date(timeIntervalSince1970: TimeInterval(current.withLock { $0 })) }
    func advance(by seconds: Int64) { current.withLock { $0 += seconds } }
}

/// Jitter fixed at one value, so backoff delays are known.
struct FixedJitter: JitterSource {
    var value: Double
    func unit() -> Double { value }
}

struct TempDir {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

/// A small final night of one side: awake, core, deep, REM, starting at `start`.
func testNight(side: BedSide = .left, start: Int64) -> NightRecord {
    let stages: [SleepStage] = [.awake, .core, .core, .deep, .deep, .rem]
    let epochs = stages.enumerated().map { EpochRecord(start: start + Int64($0.offset) * 30, stage: $0.element, heartRate: 60) }
    let metrics = NightMetrics(
        timeInBedMinutes: 3, totalSleepMinutes: 2.5, efficiency: 83.3, onsetLatencyMinutes: 0.5, wasoMinutes: 0,
        awakenings: 0, awakeMinutes: 0.5, coreMinutes: 1, deepMinutes: 1, remMinutes: 0.5,
        awakePercent: 16.7, corePercent: 33.3, deepPercent: 33.3, remPercent: 16.7,
        meanHeartRate: 60, meanHRV: nil, meanBreathingRate: nil, score: 70)
    return NightRecord(podSerial: "PB-UP", side: side, start: start, end: start + 180, epochs: epochs, metrics: metrics)
}
