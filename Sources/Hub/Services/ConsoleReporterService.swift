import Foundation
import Logging
import SleepDomain
import PodProtocol
import ServiceLifecycle

/// The bus's console subscriber: pod found and gone, clock set, in bed, and a live line
/// (per side: HR, BR, movement) that replaces itself on a terminal every
/// `progressSeconds`. Nights, schedules and alarms are told by the parts that handle them
/// (they print multi-line hypnograms and their own answers), so they are not repeated here.
package struct ConsoleReporterService: Service {
    private let subscription: HubSubscription
    private let reporter: HubReporter
    private let configuration: HubConfiguration

    /// Subscribes at once, so nothing published after `init` is missed.
    package init(bus: HubBus, reporter: HubReporter, configuration: HubConfiguration) {
        // The live seconds make the live line, which goes nowhere with the console off and the
        // log above debug: then this task is not woken twice a second for them.
        let showsLive = reporter.console || reporter.logger.logLevel <= .debug
        subscription = bus.subscribe(name: "console", bufferSize: 4096, accepts: { showsLive || !$0.isLive })
        self.reporter = reporter
        self.configuration = configuration
    }

    package func run() async {
        let subscription = self.subscription
        var lines = ConsoleLines(configuration: configuration)
        await withGracefulShutdownHandler {
            for await event in subscription {
                lines.handle(event, reporter: reporter)
            }
        } onGracefulShutdown: {
            subscription.finish()
        }
        reporter.endProgress()
    }
}

/// What the console prints for each event; the live line's throttle.
struct ConsoleLines {
    let configuration: HubConfiguration
    private var latest: [BedSide: LiveSecond] = [:]
    private var lastProgress: ContinuousClock.Instant?
    /// One formatter per zone, made once: making one costs milliseconds, and the live line
    /// formats a time every `progressSeconds` for as long as the hub runs.
    private var formatters: [TimeZone: DateFormatter] = [:]

    init(configuration: HubConfiguration) { self.configuration = configuration }

    mutating func handle(_ event: HubEvent, reporter: HubReporter) {
        switch event {
        case .podConnected(let pod, let endpoint, _):
            reporter.event("pod \(pod.serial) found at \(endpoint): firmware \(pod.firmware), \(pod.sides) sides × "
                           + "\(pod.piezoChannelsPerSide) piezo channels at \(pod.sampleRate) Hz, boot #\(pod.bootCount)")
        case .podDisconnected(let serial, let reason, _):
            latest = [:]
            reporter.event("pod \(serial) disconnected (\(reason)); waiting for it to come back")
        case .clockSet(_, let anchor):
            let time = Date(timeIntervalSince1970: Double(anchor.unixMillis) / 1000)
            reporter.logger.info("pod clock set to \(format(time, zone: configuration.podTimeZone)) at tick \(anchor.tick)")
        case .presence(_, let side, let inBed, let at):
            if inBed { reporter.event("\(side): in bed at \(format(at, zone: configuration.hubTimeZone))") }
        case .live(_, let side, let second):
            latest[side] = second
            showProgressIfDue(reporter)
        case .linkCounters, .linkProblem, .preliminaryStage, .alarm, .schedulePushed, .scheduleAcknowledged, .nightFinished, .wake, .powerSet,
             .powerReported, .wakeSettings:
            break
        case .presencePower(let notice):
            reporter.event(notice.consoleLine)
        case .presencePowerSettings(_, let side, let p):
            reporter.event("\(side): presence-driven power \(p.enabled ? "on" : "off")\(p.isAway ? ", away" : "") (set at run time)")
        }
    }

    private mutating func showProgressIfDue(_ reporter: HubReporter) {
        let now = ContinuousClock.now
        if let last = lastProgress, now - last < .milliseconds(Int64(configuration.progressSeconds * 1000)) { return }
        lastProgress = now
        guard let newest = latest.values.map(\.time).max() else { return }
        let time = format(Date(timeIntervalSince1970: newest), zone: configuration.hubTimeZone)
        let sides = BedSide.allCases.map { side -> String in
            guard let v = latest[side] else { return "\(side): –" }
            guard v.present else { return "\(side): empty" }
            let hr = v.heartRate.map { String(format: "HR %.0f", $0) } ?? "HR –"
            let br = v.breathingRate.map { String(format: "BR %.1f", $0) } ?? "BR –"
            return "\(side): \(hr) \(br) move \(String(format: "%.1f", v.movement))"
        }
        reporter.progress("\(time)  " + sides.joined(separator: "  |  "))
    }

    private mutating func format(_ date: Date, zone: TimeZone) -> String {
        if let f = formatters[zone] { return f.string(from: date) }
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = zone
        f.dateFormat = "EEE yyyy-MM-dd HH:mm"
        formatters[zone] = f
        return f.string(from: date)
    }
}
