import BackendUpload
import Foundation
import Logging
import PodDevice
import ServiceLifecycle
import SleepStore
import SmartWake

/// The hub daemon, assembled: the store, the event bus with its state and control sides,
/// and one swift-service-lifecycle service per long-running job (docs/architecture.md):
///
/// | service | owns |
/// |---|---|
/// | `DiscoveryService` | udev discovery and the directory of pods present (absent with `pod.path`) |
/// | `ConsoleReporterService` | the console lines, as a bus subscriber |
/// | `ScheduleService` | the schedule driver's timed pushes |
/// | `OutboxService` | uploads (only with `upload.baseURL`) |
/// | `PruneService` | daily pruning of old epochs |
/// | `PodLinkService` | the pod's link, its pipeline (router → trackers → store) and control |
///
/// Services added by `run(adding:)` (the API, MQTT) start last and are stopped first on
/// SIGTERM/SIGINT; the pod link is stopped after them and keeps what the open nights hold,
/// and the store is closed once every service has returned.
package struct HubDaemon: Sendable {
    package let configuration: HubConfiguration
    /// This hub's hold on its database: one hub per database (`HubStateLock`).
    package let lock: HubStateLock
    package let clock: HubClock
    package let reporter: HubReporter
    package let store: NightStore
    /// Publish/subscribe of everything that happens, and the `HubState` snapshot.
    package let bus: HubBus
    /// Commands to connected pods and the manual schedule.
    package let control: HubControl
    package let schedule: ScheduleDriver?
    /// Smart wake (with the schedule service).
    package let wake: SmartWakeService?
    package let link: PodLinkService
    package let discovery: DiscoveryService?
    /// In start order.
    package let services: [any Service]

    /// Opens the store and builds every part. `opener` replaces the configured way to find
    /// the pod (tests); `recordPath` also writes everything received to a capture file.
    package static func assemble(configuration: HubConfiguration, clock: HubClock, reporter: HubReporter,
                                recordPath: String? = nil, opener: (any PodOpener)? = nil,
                                timing: LinkTiming? = nil, wakeRule: SmartWakeRule = SmartWakeRule()) async throws -> HubDaemon {
        // The database's directory (the state directory unless `database` puts it elsewhere);
        // the exports' is made with the first export.
        try NightStore.createDirectory(containing: configuration.databasePath)
        let lock = try HubStateLock(database: configuration.databasePath)
        let store = try await openStore(configuration, reporter: reporter)
        reporter.event("database \(configuration.databasePath)")
        let bus = HubBus(logger: reporter.logger)
        let schedule = configuration.schedule.enabled
            ? ScheduleDriver(store: store, configuration: configuration, clock: clock, reporter: reporter, bus: bus) : nil
        let control = HubControl(schedule: schedule, bus: bus)

        var services: [any Service] = []
        var discovery: DiscoveryService?
        let podOpener: any PodOpener
        if let opener {
            podOpener = opener
        } else if let path = configuration.pod.path {
            reporter.event("using the pod at \(path)")
            podOpener = PathOpener(path: path)
        } else {
            let service = try DiscoveryService(configuration: configuration, reporter: reporter)
            discovery = service
            services.append(service)
            podOpener = service.opener
        }
        services.append(ConsoleReporterService(bus: bus, reporter: reporter, configuration: configuration))
        if let schedule { services.append(ScheduleService(driver: schedule)) }
        let wake = schedule.map {
            SmartWakeService(store: store, configuration: configuration, clock: clock, reporter: reporter, bus: bus,
                             control: control, schedule: $0, rule: wakeRule)
        }
        if let wake { services.append(wake) }
        // With the schedule service: each side acts only while its presence-driven power is on,
        // which the owner can switch at run time (the configuration gives the default).
        if let schedule {
            services.append(PresencePowerService(store: store, configuration: configuration, clock: clock, reporter: reporter,
                                                 bus: bus, control: control, schedule: schedule))
        }
        if let url = configuration.upload.baseURL {
            let upload = try UploadConfiguration(baseURL: url, bearerToken: configuration.upload.token)
            reporter.event("uploading finished nights to \(upload.baseURL)")
            services.append(OutboxService(worker: OutboxWorker(store: store, configuration: upload, logger: reporter.logger),
                                          pollSeconds: configuration.upload.pollSeconds, reporter: reporter))
        }
        services.append(PruneService(store: store, days: configuration.retention.epochDays, reporter: reporter))
        let recorder = try recordPath.map { try CaptureRecorder(path: $0) }
        let link = PodLinkService(configuration: configuration, store: store, clock: clock, bus: bus, reporter: reporter,
                                  control: control, schedule: schedule, opener: podOpener, recorder: recorder, timing: timing,
                                  wake: wake)
        services.append(link)
        return HubDaemon(configuration: configuration, lock: lock, clock: clock, reporter: reporter, store: store, bus: bus,
                         control: control, schedule: schedule, wake: wake, link: link, discovery: discovery,
                         services: services)
    }

    /// Runs every service (and `extra` ones, started after the hub's own) until a signal of
    /// `stopSignals` (a graceful shutdown) or cancellation; then closes the store.
    ///
    /// The command catches SIGTERM and SIGINT from its first line (`InterruptSignals.stream()`)
    /// and hands them in here, rather than the service group trapping them as it starts: on
    /// Linux its signal sources take hold some milliseconds after the services start, and a hub
    /// stopped in that gap died of the signal (status 143). A signal that came while the hub
    /// was assembled waits in the stream and stops it as soon as it runs.
    package func run(adding extra: [any Service] = [], stopSignals: AsyncStream<Int32>?) async throws {
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: (services + extra).map {
                .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                      failureTerminationBehavior: .gracefullyShutdownGroup)
            },
            logger: reporter.logger))
        defer {
            do { try store.close() } catch { reporter.warning("closing the database: \(error)") }
            lock.release()
            reporter.event("hub stopped")
        }
        guard let stopSignals else { return try await group.run() }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            tasks.addTask {
                for await _ in stopSignals { await group.triggerGracefulShutdown() }
            }
            // The service group ended (stopped, or a service failed): stop listening for signals.
            defer { tasks.cancelAll() }
            try await tasks.next()
        }
    }

    /// Opens (creating and migrating) the database. Another process opening the same new
    /// file at the same moment (a CLI command while the daemon starts) can make the first
    /// migration fail with "database is locked": that is retried, anything else is not.
    static func openStore(_ configuration: HubConfiguration, reporter: HubReporter) async throws -> NightStore {
        var attempt = 1
        while true {
            do {
                let store = try NightStore(path: configuration.databasePath, timeZone: configuration.hubTimeZone)
                // A file damaged inside opens and reads; the nights written to it would be lost.
                do { try await store.checkIntegrity() } catch {
                    try? store.close()
                    throw error
                }
                return store
            } catch let error as StoreError where error.isBusy && attempt < 5 {
                reporter.warning("database busy on open (attempt \(attempt)): \(error); retrying")
                attempt += 1
                try await Task.sleep(for: .seconds(1))
            }
        }
    }
}
