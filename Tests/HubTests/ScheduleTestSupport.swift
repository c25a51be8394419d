import Foundation
import TestSupport
import Hub
import Logging
import PodDevice
import PodProtocol
import SleepSchedule
import SleepStore
import Synchronization
import VirtualPod
import SleepDomain

/// A fresh temporary directory, removed by `cleanup()`.
struct ScheduleTempDir {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hub-schedule-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

extension VirtualPodConfiguration {
    /// The transmit queue of a pod the hub tests play fast, for tests of the night's content. A
    /// firmware's 1 MiB holds two minutes of the pod's data; at 300× that is 0.4 s of the hub's
    /// real time, and a debug-built hub on a slow 2-core machine stalls that long now and then
    /// (storing a snapshot), so the pod dropped minutes of the night and those tests failed for
    /// want of data (CI, 2026-11-26, on a machine 2.7× slower than the one the tests were
    /// written on). 32 MiB is about an hour of the pod's data, 12 s of real time at 300×. The
    /// restart test keeps 1 MiB: the hole it measures is the data the pod dropped while no hub
    /// read it.
    static let clockedTransmitQueue = 32 << 20
}

/// Keeps every line the hub reports, so tests can check what a person would read.
final class ReportedLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }
}

struct CapturingLogHandler: LogHandler {
    let sink: ReportedLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { sink.append("\(event.level): \(event.message)") }
}

/// Local wall time in `zone` as a Date.
func scheduleDate(_ zone: String, _ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int = 0) -> Date {
    var cal = Calendar(identifier: .gregorian)
    cal.timeZone = TimeZone(identifier: zone)!
    return cal.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi))!
}

/// The parts of the daemon the schedule service needs, all real: a SQLite store in a temp
/// dir, a virtual pod on a pty (no night model: firmware only, so it is cheap at high
/// speed), a PodConnection through a PathOpener on the pod's stable link, the
/// ScheduleDriver in the connection's after-connect hook, link events forwarded to it, and
/// its timer loop running. The hub clock and the pod run at the same speed.
final class ScheduleRig: Sendable {
    let dir: ScheduleTempDir
    let store: NightStore
    let driver: ScheduleDriver
    let connection: PodConnection
    let reported: ReportedLines
    let serial: String
    let speed: Double
    let clock: HubClock
    let zone: TimeZone
    let linkPath: String
    private let pods: Mutex<[VirtualPod]>
    private let tasks: Mutex<[Task<Void, Never>]>

    init(serial: String = "VPOD-SCHED", zone: String = "Europe/Berlin", start: Date, speed: Double,
         configure: (inout HubConfiguration) -> Void = { _ in },
         asksStatus: Bool = true,
         beforeStart: (NightStore) async throws -> Void = { _ in }) async throws {
        dir = try ScheduleTempDir()
        self.serial = serial
        self.speed = speed
        self.zone = TimeZone(identifier: zone)!
        var config = HubConfiguration()
        config.stateDirectory = dir.path("state")
        config.timeZone = zone
        config.schedule.podTimeZone = zone
        configure(&config)
        store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: zone)!)
        try await beforeStart(store)
        let lines = ReportedLines()
        reported = lines
        let logger = Logger(label: "hub-schedule-test", factory: { _ in CapturingLogHandler(sink: lines) })
        clock = HubClock(start: start, speed: speed)
        let driver = ScheduleDriver(store: store, configuration: config, clock: clock,
                                    reporter: HubReporter(logger: logger, console: false))
        self.driver = driver
        linkPath = dir.path("pod-link")
        pods = Mutex([])
        tasks = Mutex([])
        let clock = self.clock, podZone = self.zone
        connection = PodConnection(
            opener: PathOpener(path: linkPath),
            timing: LinkTiming(responseTimeout: .milliseconds(300), retries: 3, reconnectInitialDelay: .milliseconds(30),
                               reconnectMaxDelay: .milliseconds(200),
                               // Without status (`asksStatus: false`) a clock the pod loses goes unseen.
                               livenessTimeout: asksStatus ? .seconds(3) : .seconds(3600),
                               statusInterval: asksStatus ? .milliseconds(500) : .seconds(3600)),
            streams: [],
            clock: { clock.clockSetting(podZone: podZone) },
            afterConnect: { connection in await driver.podConnected(connection) })
        try startPod()
        let connection = self.connection
        let serial = self.serial
        let linkTask = Task { _ = try? await connection.run() }
        let eventTask = Task {
            for await event in connection.events {
                switch event {
                case .frame(let frame, _):
                    if case .event(let podEvent) = frame.message, let anchor = await connection.anchor {
                        let at = Date(timeIntervalSince1970: anchor.unixTime(ofTick: podEvent.tick))
                        await driver.podEvent(podEvent, podSerial: serial, at: at)
                    }
                case .disconnected:
                    await driver.podDisconnected()
                case .clockInvalid:  // as PodLinkService relays it
                    await driver.podClockLost(podSerial: serial)
                default:
                    break
                }
            }
        }
        let timerTask = Task { await driver.run() }
        tasks.withLock { $0 = [linkTask, eventTask, timerTask] }
    }

    /// Starts a (new) virtual pod with this rig's serial on the same link path: a replug.
    @discardableResult
    func startPod(faults: [ScheduledFault] = []) throws -> VirtualPod {
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: serial, sides: 2, channelsPerSide: 1),
            speed: speed, replay: [], faults: faults, linkPath: linkPath, stopsAtEnd: false))
        try pod.start()
        pods.withLock { $0.append(pod) }
        return pod
    }

    var pod: VirtualPod { pods.withLock { $0.last! } }

    func stopPod() { pod.stop() }

    func pushes() async throws -> [SchedulePushRecord] { try await store.schedulePushes(podSerial: serial) }

    func commands() async throws -> [String] { try await pushes().map(\.command) }

    /// Waits until the driver reports everything desired as acknowledged.
    func waitInSync() async -> Bool { await eventually { await driver.isInSync } }

    func shutdown() async {
        let all = tasks.withLock { $0 }
        for t in all { t.cancel() }
        for t in all { await t.value }
        for p in pods.withLock({ $0 }) { p.stop() }
        dir.cleanup()
    }
}

extension ScheduleReport {
    var powerText: String? { power.map { "\($0.on)-\($0.off) days \($0.days.rawValue)" } }
}

/// A stored night for `side`: in bed at `bed` (local), out at `wake` the next morning.
func storedNight(_ store: NightStore, serial: String, side: BedSide, zone: String, wakeDay: (Int, Int, Int),
                 bed: (Int, Int), wake: (Int, Int)) async throws {
    let end = scheduleDate(zone, wakeDay.0, wakeDay.1, wakeDay.2, wake.0, wake.1)
    var start = scheduleDate(zone, wakeDay.0, wakeDay.1, wakeDay.2, bed.0, bed.1)
    if start >= end { start = start.addingTimeInterval(-86_400) }
    let minutes = end.timeIntervalSince(start) / 60
    let metrics = NightMetrics(
        timeInBedMinutes: minutes, totalSleepMinutes: minutes - 20, efficiency: 95, onsetLatencyMinutes: 10,
        wasoMinutes: 10, awakenings: 1, awakeMinutes: 20, coreMinutes: minutes * 0.5, deepMinutes: minutes * 0.2,
        remMinutes: minutes * 0.2, awakePercent: 5, corePercent: 50, deepPercent: 20, remPercent: 20,
        meanHeartRate: 58, meanHRV: 40, meanBreathingRate: 14, score: 80)
    try await store.save(NightRecord(podSerial: serial, side: side, start: Int64(start.timeIntervalSince1970),
                               end: Int64(end.timeIntervalSince1970), epochs: [], metrics: metrics))
}
