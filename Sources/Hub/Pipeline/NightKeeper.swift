import Foundation
import SleepDomain
import PodProtocol
import SleepAnalysis
import SleepStore

/// What happens to a night the session tracker handed over: it is staged, stored
/// (preliminary or final) and, when final, summarised on the bus and exported to a file.
///
/// Session boundaries are the tracker's alone: the analyzer gets an unlimited `maxGap` and
/// `maxDataGap`, so it never splits what the tracker kept together; it only drops stays shorter than
/// `sessions.minSessionMinutes` and stages the epochs.
struct NightKeeper: Sendable {
    let store: NightStore
    let configuration: HubConfiguration
    let bus: HubBus
    let reporter: HubReporter
    private let analyzer: SleepAnalyzer

    init(store: NightStore, configuration: HubConfiguration, bus: HubBus, reporter: HubReporter) {
        self.store = store
        self.configuration = configuration
        self.bus = bus
        self.reporter = reporter
        analyzer = SleepAnalyzer(rules: SessionRules(maxGap: .infinity, minDuration: configuration.sessions.minSessionMinutes * 60,
                                                     maxDataGap: .infinity),
                                 timeZone: configuration.hubTimeZone)
    }

    /// What keeping a night came to: the final sessions stored, and whether any session of it
    /// could not be stored (a full disk, a damaged file), so the caller keeps the night to try again.
    struct Outcome: Sendable {
        var finals = 0
        var failed = false
    }

    /// Stages `night` and stores it.
    @discardableResult
    func keep(_ night: SessionTracker.Night, serial: String, side: BedSide, isFinal: Bool) async -> Outcome {
        let sessions = analyzer.analyze(night.input, isFinal: isFinal)
        if isFinal && sessions.isEmpty {
            reporter.event("\(side): \(Int((night.end - night.start) / 60)) min in bed: too short for a session, not kept")
        }
        var outcome = Outcome()
        for session in sessions {
            let record = NightRecordMapping.record(session, podSerial: serial, side: side)
            do {
                let saved = try await store.save(record)
                guard isFinal else {
                    if let last = session.epochs.last {
                        bus.publish(.preliminaryStage(serial: serial, side: side, stage: last.stage,
                                                      epochStart: Date(timeIntervalSince1970: last.start)))
                    }
                    continue
                }
                outcome.finals += 1
                bus.publish(.nightFinished(NightSummary(
                    serial: serial, side: side, wakeDate: saved.wakeDate.description,
                    start: Date(timeIntervalSince1970: session.start), end: Date(timeIntervalSince1970: session.end),
                    metrics: session.metrics)))
                reporter.event(Self.summary(session, side: side, wakeDate: saved.wakeDate.description))
                if let wake = try? await store.wakeRecord(podSerial: serial, side: side, wakeDate: saved.wakeDate,
                                                          nightEnd: Int64(session.end.rounded())) {
                    reporter.event("night of \(saved.wakeDate.description), \(side): \(wake.summary(in: configuration.podTimeZone))")
                }
                reporter.event(HypnogramText.render(session, width: 72))
                await NightExporter(store: store, configuration: configuration, reporter: reporter)
                    .export(wakeDate: saved.wakeDate, side: side)
            } catch {
                outcome.failed = true
                reporter.warning("\(side): could not store the session starting \(record.start): \(error)")
            }
        }
        return outcome
    }

    /// A stay ended: the side is out of bed from its end, and the night is stored as final.
    func keepEnded(_ night: SessionTracker.Night, serial: String, side: BedSide) async -> Outcome {
        bus.publish(.presence(serial: serial, side: side, inBed: false, at: Date(timeIntervalSince1970: night.end)))
        return await keep(night, serial: serial, side: side, isFinal: true)
    }

    /// The one-line summary the console prints for a finished night.
    static func summary(_ s: SleepSession, side: BedSide, wakeDate: String) -> String {
        let m = s.metrics
        func hm(_ minutes: Double) -> String { "\(Int(minutes) / 60)h\(String(format: "%02d", Int(minutes) % 60))" }
        var parts = ["night of \(wakeDate), \(side): in bed \(hm(m.timeInBedMinutes)), asleep \(hm(m.totalSleepMinutes))",
                     String(format: "efficiency %.0f%%", m.sleepEfficiency * 100),
                     "deep \(hm(m.stageMinutes.deep)) rem \(hm(m.stageMinutes.rem)) core \(hm(m.stageMinutes.core))",
                     "WASO \(Int(m.wasoMinutes)) min, \(m.awakenings) awakening\(m.awakenings == 1 ? "" : "s")"]
        if let hr = m.meanHeartRate { parts.append(String(format: "HR %.0f", hr)) }
        if let br = m.meanBreathingRate { parts.append(String(format: "BR %.1f", br)) }
        parts.append("score \(m.score)/100")
        return parts.joined(separator: ", ")
    }
}

/// Writes a finished night to `export.directory` in the configured format.
struct NightExporter: Sendable {
    let store: NightStore
    let configuration: HubConfiguration
    let reporter: HubReporter

    func export(wakeDate: CalendarDay, side: BedSide) async {
        let format = ExportFormat(rawValue: configuration.export.format) ?? .json
        let dir = configuration.exportDirectory
        let path = (dir as NSString).appendingPathComponent("\(wakeDate)-\(side).\(format == .csv ? "csv" : "json")")
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let text = try await SleepExporter(store: store).export(.date(wakeDate), side: side,
                                                              format: format, timeZone: configuration.hubTimeZone)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            reporter.event("\(side): night of \(wakeDate) exported to \(path)")
        } catch {
            reporter.warning("\(side): export of \(wakeDate) failed: \(error)")
        }
    }
}
