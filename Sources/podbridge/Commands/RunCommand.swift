import ArgumentParser
import Foundation
import Hub
import HubAPI
import HubMQTTService
import HomeKitService
import Logging
import PodDevice
import ServiceLifecycle
import SystemCalls

/// `podbridge run`: the hub daemon.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the hub: find the pod, stream, analyse each night, store, export, keep the schedule.",
        discussion: """
        Configuration: --config FILE, else $PODBRIDGE_CONFIG, else /etc/podbridge/config.json if it exists, \
        else defaults; PODBRIDGE_* environment variables and the options below override it \
        (docs/configuration.md); export, sync, schedule and analyze read the same. \
        Stops cleanly on SIGTERM, SIGINT or SIGHUP (a closed terminal), keeping any open night as a preliminary session.
        """)

    @OptionGroup var common: ConfigurationOptions

    @Option(help: "The pod's tty, instead of udev discovery (e.g. the virtual pod's link).")
    var path: String?

    @Option(help: "The hub's time zone (IANA name).")
    var tz: String?

    @Option(help: "host:port of the local API and dashboard (configuration: api.listen; default 127.0.0.1:8380).")
    var listen: String?

    @Flag(name: .customLong("no-api"), help: "Do not serve the local API and dashboard.")
    var noAPI = false

    @Option(help: "Also record everything received to this capture file.")
    var record: String?

    @Option(name: .customLong("clock-speed"), help: "Simulation only: run the hub's clock this many times faster than real time.")
    var clockSpeed: Double = 1

    @Option(name: .customLong("clock-start"), help: "Simulation only: the hub's clock starts at this ISO 8601 time.")
    var clockStart: String?

    @Option(name: .customLong("clock-timeline"),
            help: "Simulation only: run the hub's clock on the paced time a test's virtual pods publish in this file.")
    var clockTimeline: String?

    @Flag(inversion: .prefixedNo, help: "Print what happens on standard output (off under systemd).")
    var console = true

    @Option(name: .customLong("log-level"),
            help: "trace, debug, info, notice, warning, error or critical (configuration: logLevel; default info under systemd, else warning).")
    var logLevel: String?

    func validate() throws {
        guard clockSpeed > 0 else { throw ValidationError("--clock-speed must be > 0") }
        if let clockStart, ISO8601DateFormatter().date(from: clockStart) == nil {
            throw ValidationError("--clock-start must be ISO 8601 with an offset, e.g. 2026-11-16T21:00:00+01:00")
        }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil { throw ValidationError("unknown --log-level '\(logLevel)'") }
        // The options' own mistakes are usage errors (64), named as options, not as the keys they set.
        if let tz, TimeZone(identifier: tz) == nil { throw ValidationError("unknown time zone '\(tz)' for --tz") }
        if let listen {
            do { _ = try ListenAddress(parsing: listen) } catch { throw ValidationError("--listen: \(error)") }
        }
    }

    /// Defaults, then the file, then the environment, then the options.
    func loadSettings() throws -> HubConfiguration {
        try common.load { settings in
            if let path { settings.pod.path = path }
            if let tz { settings.timeZone = tz }
            if let listen { settings.api.listen = listen }
            if noAPI { settings.api.enabled = false }
            if let logLevel { settings.logLevel = logLevel }
        }
    }

    func run() async throws {
        // Caught from here on, so a hub stopped while it starts still stops cleanly (HubDaemon.run).
        let stopSignals = InterruptSignals.stream()
        let settings = try loadSettings()
        // A binary copied without its web files stops here, before the database or the pod.
        if settings.api.enabled {
            do { _ = try StaticRoutes.resourceDirectory() } catch { throw CommandFailure("\(error)") }
        }
        let journal = JournalLogHandler.stderrIsJournal()
        // The journal keeps what a terminal's reader already saw on the console.
        let level = settings.logLevel.flatMap(Logger.Level.init(rawValue:)) ?? (journal ? .info : .warning)
        LoggingSystem.bootstrap { label in
            if journal { return JournalLogHandler(label: label, logLevel: level) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "podbridge")
        // Each API client is a descriptor: with the soft limit's default of 1024, a burst of
        // connections used to leave the pod's link and the database none (EMFILE).
        do {
            let files = try SystemCalls.raiseOpenFileLimit()
            logger.info("open files: up to \(files.soft) (hard limit \(files.hard))")
        } catch {
            logger.warning("could not raise the open files limit: \(error)")
        }
        let timeline = try clockTimeline.map { path throws(SystemError) in try PacedTimeline(followingFileAt: path) }
        let clock = HubClock(start: clockStart.flatMap { ISO8601DateFormatter().date(from: $0) }, speed: clockSpeed,
                             timeline: timeline)
        let reporter = HubReporter(logger: logger, console: console)
        if clock.isAccelerated {
            reporter.event("simulated clock: starts \(clockStart ?? "now"), \(clockSpeed)× real time")
        }
        let hub = try await HubDaemon.assemble(configuration: settings, clock: clock, reporter: reporter, recordPath: record)
        // HomeKit's setup code and QR code, for the dashboard while unpaired.
        let homekitBoard = settings.homekit.enabled ? HomeKitSetupBoard() : nil
        let api = settings.api.enabled
            ? HubAPIService(configuration: settings, store: hub.store, bus: hub.bus, control: hub.control, reporter: reporter,
                            clock: hub.clock, homekit: homekitBoard)
            : nil
        var extra: [any Service] = api.map { [$0] } ?? []
        // MQTT with Home Assistant discovery: off unless mqtt.host is set (docs/mqtt.md).
        if settings.mqtt.host != nil {
            let dashboard = settings.api.enabled ? Self.dashboardURL(listen: settings.api.listen) : nil
            do {
                extra.append(try MQTTService(configuration: settings, bus: hub.bus, control: hub.control, store: hub.store,
                                             reporter: reporter, dashboardURL: dashboard, clock: hub.clock))
            } catch {
                throw CommandFailure("MQTT: \(error)")
            }
        }
        // HomeKit: off unless homekit.enabled (docs/homekit.md).
        if settings.homekit.enabled {
            do {
                extra.append(try HomeKitService(configuration: settings, bus: hub.bus, control: hub.control, store: hub.store,
                                                reporter: reporter, board: homekitBoard))
            } catch {
                throw CommandFailure("HomeKit: \(error)")
            }
        }
        try await hub.run(adding: extra, stopSignals: stopSignals)
    }

    /// The dashboard's address as Home Assistant's `configuration_url` (a wildcard address
    /// becomes this machine's host name; port 0 is only known once bound, so none is given).
    static func dashboardURL(listen: String) -> String? {
        guard let address = try? ListenAddress(parsing: listen), address.port != 0 else { return nil }
        var host = address.host
        if host == "0.0.0.0" || host == "::" { host = ProcessInfo.processInfo.hostName }
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(address.port)/"
    }
}
