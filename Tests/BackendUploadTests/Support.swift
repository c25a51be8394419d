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

/// Lines a test collects from a callback.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// Another process holding the database's write lock: the `sqlite3` shell in a transaction
/// begun with `BEGIN IMMEDIATE`, as a second podbridge (or an admin's shell) would.
final class SQLiteWriteLock {
    static let shell = "/usr/bin/sqlite3"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: shell) }

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    /// Returns once the lock is held.
    init(path: String) throws {
        process.executableURL = URL(fileURLWithPath: Self.shell)
        process.arguments = [path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\nSELECT 'locked';\n".utf8))
        var seen = ""
        while !seen.contains("locked") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw CocoaError(.fileReadUnknown) }   // the shell ended
            seen += String(decoding: data, as: UTF8.self)
        }
    }

    func release() {
        guard process.isRunning else { return }
        input.fileHandleForWriting.write(Data("COMMIT;\n.quit\n".utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
