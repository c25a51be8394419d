import Foundation
import PodAnalysis
import PodDevice
import PodProtocol
import SleepAnalysis
import SleepStore

/// One pod on this hub: its link, its two sides' live pipelines and session trackers, and
/// what happens when a night ends (analyse, store, export, reschedule).
///
/// Everything here runs on this actor, fed in order by the connection's events; the
/// connection itself reconnects and re-handshakes on its own (PodDevice).
public actor PodRunner {
    private let configuration: HubConfiguration
    private let store: SleepStore
    private let clock: HubClock
    private let reporter: HubReporter
    private let schedule: ScheduleDriver?
    private let connection: PodConnection
    private let analyzer: SleepAnalyzer

    private var router = PodSignalRouter()
    private var trackers: [Side: SessionTracker]
    private var latest: [Side: SecondVitals] = [:]
    private var serial: String?
    private var lastProgress = ContinuousClock.now
    private var progressShown = false
    /// Final sessions stored since start.
    public private(set) var nightsStored = 0

    public init(configuration: HubConfiguration, store: SleepStore, clock: HubClock, reporter: HubReporter,
                opener: any PodOpener, recorder: CaptureRecorder? = nil, timing: LinkTiming = LinkTiming()) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        self.reporter = reporter
        let driver = configuration.schedule.enabled
            ? ScheduleDriver(store: store, configuration: configuration, clock: clock, reporter: reporter) : nil
        schedule = driver
        let podZone = configuration.podTimeZone
        connection = PodConnection(
            opener: opener, expectedSerial: configuration.pod.serial, timing: timing, recorder: recorder,
            clock: {
                let now = clock.now()
                return ClockSetting(unixMillis: Int64((now.timeIntervalSince1970 * 1000).rounded()),
                                    utcOffsetMinutes: Int16(podZone.secondsFromGMT(for: now) / 60))
            },
            afterConnect: { connection in
                if let driver { await driver.podConnected(connection) }
            })
        let rules = SessionTracker.Rules(maxGap: configuration.sessions.maxGapMinutes * 60,
                                         preliminaryEvery: configuration.sessions.preliminaryEveryMinutes * 60)
        trackers = [.left: SessionTracker(rules: rules), .right: SessionTracker(rules: rules)]
        analyzer = SleepAnalyzer(rules: SessionRules(maxGap: configuration.sessions.maxGapMinutes * 60,
                                                     minDuration: configuration.sessions.minSessionMinutes * 60),
                                 timeZone: configuration.hubTimeZone)
    }

    /// Runs until cancelled; then stores what the open sessions hold so nothing is lost.
    public func run() async {
        let connection = self.connection
        let link = Task { try await connection.run() }
        let timers = Task { [schedule] in await schedule?.run() }
        for await event in connection.events {
            await handle(event)
        }
        link.cancel()
        timers.cancel()
        _ = await link.result
        await shutdown()
    }

    private func handle(_ event: LinkEvent) async {
        switch event {
        case .connecting(let endpoint):
            reporter.logger.debug("opening \(endpoint)")
        case .connected(let info, let endpoint):
            serial = info.serial
            endProgress()
            reporter.event("pod \(info.serial) found at \(endpoint): firmware \(info.firmware), \(info.sides) sides × "
                           + "\(info.piezoChannelsPerSide) piezo channels at \(info.sampleRate) Hz, boot #\(info.bootCount)")
            do {
                try store.recordPod(serial: info.serial, firmware: info.firmware.description,
                                    seenAt: Int64(clock.now().timeIntervalSince1970))
            } catch {
                reporter.warning("cannot record pod \(info.serial): \(error)")
            }
        case .clockSet(let anchor):
            router.anchor(anchor)
            let time = Date(timeIntervalSince1970: Double(anchor.unixMillis) / 1000)
            reporter.logger.info("pod clock set to \(Self.format(time, zone: configuration.podTimeZone)) at tick \(anchor.tick)")
        case .streaming:
            reporter.event("streaming from pod \(serial ?? "?")")
        case .frame(let frame, _):
            await handle(frame.message)
        case .podRebooted:
            endProgress()
            reporter.event("pod \(serial ?? "?") rebooted: clock and schedule are being sent again")
        case .refused(let error, let retryIn):
            endProgress()
            reporter.warning("pod \(serial ?? "?") refused: \(error); asking again in \(retryIn.components.seconds) s")
        case .disconnected(let reason):
            endProgress()
            reporter.event("pod \(serial ?? "?") disconnected (\(reason)); waiting for it to come back")
            await schedule?.podDisconnected()
        case .retrying(let attempt, let delay, _):
            reporter.logger.debug("reconnect attempt \(attempt) in \(delay)")
        case .stopped(let error):
            if let error { reporter.warning("link stopped: \(error)") }
        }
    }

    private func handle(_ message: Message) async {
        if case .event(let e) = message, let serial {
            // The pod's own time of the event, from its tick; the hub's clock if none is set yet.
            let time = router.currentAnchor.map { Date(timeIntervalSince1970: $0.unixTime(ofTick: e.tick)) } ?? clock.now()
            await schedule?.podEvent(e, podSerial: serial, at: time)
        }
        // Every message goes through the router: BOOT ends the clock anchor in force there.
        for output in router.apply(message) {
            await feed(output.side, output.output)
        }
        showProgressIfDue()
    }

    private func feed(_ side: Side, _ output: FrontEndOutput) async {
        if let last = output.seconds.last { latest[side] = last }
        guard var tracker = trackers[side] else { return }
        let events = tracker.add(output)
        trackers[side] = tracker
        for event in events {
            switch event {
            case .started(let at):
                endProgress()
                reporter.event("\(side): in bed at \(Self.format(Date(timeIntervalSince1970: at), zone: configuration.hubTimeZone))")
            case .preliminary(let night):
                keep(night, side: side, final: false)
            case .ended(let night):
                keep(night, side: side, final: true)
                await schedule?.sessionsChanged()
            }
        }
    }

    /// Analyses a night and keeps it: final nights are also summarised and exported.
    private func keep(_ night: SessionTracker.Night, side: Side, final: Bool) {
        guard let serial else { return }
        let sessions = analyzer.analyze(beats: night.beats, vitals: night.seconds, final: final)
        if final && sessions.isEmpty {
            endProgress()
            reporter.event("\(side): \(Int((night.end - night.start) / 60)) min in bed: too short for a session, not kept")
        }
        for session in sessions {
            let record = NightRecordMapping.record(session, podSerial: serial, side: side)
            do {
                let saved = try store.save(record)
                guard final else { continue }
                nightsStored += 1
                endProgress()
                reporter.event(Self.summary(session, side: side, wakeDate: saved.wakeDate.description))
                reporter.event(HypnogramText.render(session, width: 72))
                exportNight(wakeDate: saved.wakeDate, side: side)
            } catch {
                reporter.warning("\(side): could not store the session starting \(record.start): \(error)")
            }
        }
    }

    private func exportNight(wakeDate: LocalDate, side: Side) {
        let format = ExportFormat(rawValue: configuration.export.format) ?? .json
        let dir = configuration.exportDirectory
        let path = (dir as NSString).appendingPathComponent("\(wakeDate)-\(side).\(format == .csv ? "csv" : "json")")
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let text = try SleepExporter(store: store).export(.date(wakeDate), side: NightRecordMapping.bedSide(side),
                                                              format: format, timeZone: configuration.hubTimeZone)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            reporter.event("\(side): night of \(wakeDate) exported to \(path)")
        } catch {
            reporter.warning("\(side): export of \(wakeDate) failed: \(error)")
        }
    }

    private func shutdown() async {
        endProgress()
        for side in Side.allCases {
            guard var tracker = trackers[side], let night = tracker.flush() else { continue }
            trackers[side] = tracker
            // The night is not over: keep what there is as preliminary, never lose it.
            keep(night, side: side, final: false)
            reporter.event("\(side): open session (\(Int((night.end - night.start) / 60)) min) kept as preliminary")
        }
    }

    // MARK: Console

    private func showProgressIfDue() {
        let now = ContinuousClock.now
        guard now - lastProgress >= .milliseconds(Int64(configuration.progressSeconds * 1000)) else { return }
        lastProgress = now
        guard let any = latest.values.map(\.time).max() else { return }
        let time = Self.format(Date(timeIntervalSince1970: any), zone: configuration.hubTimeZone)
        let sides = Side.allCases.map { side -> String in
            guard let v = latest[side] else { return "\(side): –" }
            guard v.present else { return "\(side): empty" }
            let hr = v.heartRate.value.map { String(format: "HR %.0f", $0) } ?? "HR –"
            let br = v.breathingRate.value.map { String(format: "BR %.1f", $0) } ?? "BR –"
            return "\(side): \(hr) \(br) move \(String(format: "%.1f", v.movement))"
        }
        progressShown = true
        reporter.progress("\(time)  " + sides.joined(separator: "  |  "))
    }

    private func endProgress() {
        if progressShown { reporter.endProgress() }
        progressShown = false
    }

    static func summary(_ s: SleepSession, side: Side, wakeDate: String) -> String {
        let m = s.metrics
        func hm(_ minutes: Double) -> String { "\(Int(minutes) / 60)h\(String(format: "%02d", Int(minutes) % 60))" }
        var parts = ["night of \(wakeDate), \(side): in bed \(hm(m.timeInBedMinutes)), asleep \(hm(m.totalSleepMinutes))",
                     String(format: "efficiency %.0f%%", m.sleepEfficiency * 100),
                     "deep \(hm(m.stageMinutes.deep)) rem \(hm(m.stageMinutes.rem)) core \(hm(m.stageMinutes.core))",
                     "WASO \(Int(m.wasoMinutes)) min, \(m.awakenings) awakenings"]
        if let hr = m.meanHeartRate { parts.append(String(format: "HR %.0f", hr)) }
        if let br = m.meanBreathingRate { parts.append(String(format: "BR %.1f", br)) }
        parts.append("score \(m.score)/100")
        return parts.joined(separator: ", ")
    }

    static func format(_ date: Date, zone: TimeZone) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = zone
        f.dateFormat = "EEE yyyy-MM-dd HH:mm"
        return f.string(from: date)
    }
}
