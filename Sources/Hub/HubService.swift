import BackendUpload
import GRDB
import Foundation
import Logging
import PodDevice
import ServiceLifecycle
import SleepStore

/// The hub daemon as a swift-service-lifecycle service: opens the store, finds the pod
/// (a configured path, or udev discovery with hot-plug), runs the pod's pipeline, the
/// upload worker and the retention pruning, and on SIGTERM/SIGINT lets the pipeline keep
/// what the open night holds before it returns.
public struct HubService: Service {
    public let configuration: HubConfiguration
    public let clock: HubClock
    public let reporter: HubReporter
    public let recordPath: String?

    public init(configuration: HubConfiguration, clock: HubClock, reporter: HubReporter, recordPath: String? = nil) {
        self.configuration = configuration
        self.clock = clock
        self.reporter = reporter
        self.recordPath = recordPath
    }

    public func run() async throws {
        try FileManager.default.createDirectory(atPath: configuration.stateDirectory, withIntermediateDirectories: true)
        let store = try await openStore()
        reporter.event("database \(configuration.databasePath)")
        let opener = try makeOpener()
        let recorder = try recordPath.map { try CaptureRecorder(path: $0) }
        let timing = LinkTiming(reconnectMaxDelay: .milliseconds(Int64(configuration.pod.reconnectMaxSeconds * 1000)))
        let runner = PodRunner(configuration: configuration, store: store, clock: clock, reporter: reporter,
                               opener: opener, recorder: recorder, timing: timing)
        let upload = try makeUploadWorker(store: store)
        let configuration = self.configuration
        let reporter = self.reporter
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await runner.run() }
                if let upload {
                    group.addTask {
                        do { try await upload.run(pollSeconds: Int64(configuration.upload.pollSeconds)) } catch {
                            if !(error is CancellationError) { reporter.warning("upload worker stopped: \(error)") }
                        }
                    }
                }
                group.addTask { await Self.pruneDaily(store: store, days: configuration.retention.epochDays, reporter: reporter) }
                // The pipeline ends only on cancellation; then stop the others too.
                await group.next()
                group.cancelAll()
            }
        }
        try? store.close()
        reporter.event("hub stopped")
    }

    /// Opens (creating and migrating) the database. Another process opening the same new
    /// file at the same moment (a CLI command while the daemon starts) can make the first
    /// migration fail with "database is locked": that is retried, anything else is not.
    private func openStore() async throws -> SleepStore {
        var attempt = 1
        while true {
            do {
                return try SleepStore(path: configuration.databasePath, timeZone: configuration.hubTimeZone)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && attempt < 5 {
                reporter.warning("database busy on open (attempt \(attempt)): \(error); retrying")
                attempt += 1
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func makeOpener() throws -> any PodOpener {
        if let path = configuration.pod.path {
            reporter.event("using the pod at \(path)")
            return PathOpener(path: path)
        }
        let match = PodMatch(vendorID: UInt16(configuration.pod.usbVendorID, radix: 16) ?? PodMatch.pidCodesVendor,
                             productID: UInt16(configuration.pod.usbProductID, radix: 16) ?? PodMatch.defaultProductID)
        let discovery = try PodDiscovery(configuration: DiscoveryConfiguration(
            match: match, rescanInterval: .milliseconds(Int64(configuration.pod.rescanSeconds * 1000))))
        reporter.event("looking for pods with USB id \(match) (udev, rescanning every \(configuration.pod.rescanSeconds) s)")
        return DiscoveredPodOpener(directory: PodDirectory(following: discovery), key: configuration.pod.serial,
                                   preferUSB: configuration.pod.preferUSB)
    }

    private func makeUploadWorker(store: SleepStore) throws -> OutboxWorker? {
        guard let url = configuration.upload.baseURL else { return nil }
        let upload = try UploadConfiguration(baseURL: url, bearerToken: configuration.upload.token)
        reporter.event("uploading finished nights to \(upload.baseURL)")
        return OutboxWorker(store: store, configuration: upload, logger: reporter.logger)
    }

    /// Keeps per-epoch detail for `days` days; sessions and blocks stay.
    static func pruneDaily(store: SleepStore, days: Int, reporter: HubReporter) async {
        while !Task.isCancelled {
            do {
                let pruned = try store.pruneEpochs(maxAgeDays: days)
                if pruned > 0 { reporter.logger.info("pruned \(pruned) epochs older than \(days) days") }
            } catch {
                reporter.warning("pruning epochs failed: \(error)")
            }
            try? await Task.sleep(for: .seconds(24 * 3600))
        }
    }
}
