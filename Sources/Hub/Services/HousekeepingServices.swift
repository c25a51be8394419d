import BackendUpload
import Foundation
import ServiceLifecycle
import SleepStore

/// Delivers finished nights from the store's outbox to the sleep backend until shutdown.
///
/// It never returns before shutdown: a failed pass (the database locked by another process
/// beyond its busy timeout, say) is a warning and is tried again after `pollSeconds`, as
/// `PruneService` does. A service that returned would shut the whole hub down, with exit
/// status 0, so systemd's `Restart=on-failure` would not even bring it back.
package struct OutboxService: Service {
    let worker: OutboxWorker
    let pollSeconds: Double
    let reporter: HubReporter

    package init(worker: OutboxWorker, pollSeconds: Double, reporter: HubReporter) {
        self.worker = worker
        self.pollSeconds = pollSeconds
        self.reporter = reporter
    }

    package func run() async {
        let (worker, reporter, poll) = (self.worker, self.reporter, pollSeconds)
        await cancelWhenGracefulShutdown {
            // The worker clamps the poll interval (0 would spin, 1e300 would not fit in Int64).
            await worker.run(pollSeconds: poll, warn: { reporter.warning($0) })
        }
    }
}

/// Keeps per-epoch detail for `retention.epochDays` days, pruning once a day; sessions and
/// blocks stay.
package struct PruneService: Service {
    let store: NightStore
    let days: Int
    let reporter: HubReporter

    package init(store: NightStore, days: Int, reporter: HubReporter) {
        self.store = store
        self.days = days
        self.reporter = reporter
    }

    package func run() async {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                do {
                    let pruned = try await store.pruneEpochs(maxAgeDays: days)
                    if pruned > 0 { reporter.logger.info("pruned \(pruned) epochs older than \(days) days") }
                } catch {
                    reporter.warning("pruning epochs failed: \(error)")
                }
                try? await Task.sleep(for: .seconds(24 * 3600))
            }
        }
    }
}

/// The schedule service's timed work (retries, DST pre-push, clock re-sync, weekday and
/// weekend alarms) until shutdown; its pushes on connect come from the pod link.
package struct ScheduleService: Service {
    package let driver: ScheduleDriver

    package init(driver: ScheduleDriver) { self.driver = driver }

    package func run() async {
        let driver = self.driver
        await cancelWhenGracefulShutdown { await driver.run() }
    }
}
