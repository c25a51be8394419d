import ArgumentParser
import Foundation
import Hub
import Logging
import ServiceLifecycle

/// `podbridge run`: the hub daemon.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the hub: find the pod, stream, analyse each night, store, export, keep the schedule.",
        discussion: """
        Configuration: --config FILE, else /etc/podbridge/config.json if it exists, else defaults; \
        PODBRIDGE_* environment variables and the options below override it (docs/configuration.md). \
        Stops cleanly on SIGTERM or SIGINT, keeping any open night as a preliminary session.
        """)

    @Option(help: "Configuration file (JSON).")
    var config: String?

    @Option(help: "The pod's tty, instead of udev discovery (e.g. the virtual pod's link).")
    var path: String?

    @Option(name: .customLong("state-dir"), help: "Directory for the database and exports.")
    var stateDirectory: String?

    @Option(help: "The hub's time zone (IANA name).")
    var tz: String?

    @Option(help: "Also record everything received to this capture file.")
    var record: String?

    @Option(name: .customLong("clock-speed"), help: "Simulation only: run the hub's clock this many times faster than real time.")
    var clockSpeed: Double = 1

    @Option(name: .customLong("clock-start"), help: "Simulation only: the hub's clock starts at this ISO 8601 time.")
    var clockStart: String?

    @Flag(inversion: .prefixedNo, help: "Print what happens on standard output (off under systemd).")
    var console = true

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "warning"

    func validate() throws {
        guard clockSpeed > 0 else { throw ValidationError("--clock-speed must be > 0") }
        if let clockStart, ISO8601DateFormatter().date(from: clockStart) == nil {
            throw ValidationError("--clock-start must be ISO 8601 with an offset, e.g. 2026-11-16T21:00:00+01:00")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    /// Defaults, then the file, then the environment, then the options.
    func loadSettings() throws(ConfigurationError) -> HubConfiguration {
        var settings: HubConfiguration
        if let config {
            settings = try HubConfiguration.load(path: config)
        } else if FileManager.default.fileExists(atPath: "/etc/podbridge/config.json") {
            settings = try HubConfiguration.load(path: "/etc/podbridge/config.json")
        } else {
            settings = HubConfiguration()
        }
        try settings.applyEnvironment(ProcessInfo.processInfo.environment)
        if let path { settings.pod.path = path }
        if let stateDirectory { settings.stateDirectory = stateDirectory }
        if let tz { settings.timeZone = tz }
        try settings.validate()
        return settings
    }

    func run() async throws {
        let settings: HubConfiguration
        do { settings = try loadSettings() } catch { throw ValidationError(error.description) }
        let level = Logger.Level(rawValue: logLevel) ?? .warning
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "podbridge")
        let clock = HubClock(start: clockStart.flatMap { ISO8601DateFormatter().date(from: $0) }, speed: clockSpeed)
        let reporter = HubReporter(logger: logger, console: console)
        if clock.isAccelerated {
            reporter.event("simulated clock: starts \(clockStart ?? "now"), \(clockSpeed)× real time")
        }
        let hub = HubService(configuration: settings, clock: clock, reporter: reporter, recordPath: record)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: hub, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
    }
}
