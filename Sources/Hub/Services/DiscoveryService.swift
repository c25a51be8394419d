import Foundation
import PodDevice
import ServiceLifecycle
import Synchronization

/// Owns udev discovery for the daemon's whole life (issue 10: a `PodDiscovery` nobody kept
/// stopped following udev right after start-up). Pods plugged in later are found, pods
/// unplugged are forgotten, and a pod that comes back at another ttyACMn is opened there:
/// the pod link's opener asks this service's directory on every (re)connect.
///
/// With `pod.serial` configured only that pod is served; other pods are reported and
/// ignored. Without it the pod opened is kept (by its USB serial) while it is plugged in:
/// another pod plugged in beside it is ignored, and is taken once the pod is gone (a pod
/// swapped for another used to be announced as "plugged in" and never used).
package final class DiscoveryService: Service, Sendable {
    package let directory = PodDirectory()
    private let discovery: PodDiscovery
    private let configuredSerial: String?
    private let pinned: Mutex<String?>
    private let preferUSB: Bool
    private let reporter: HubReporter

    package init(configuration: HubConfiguration, reporter: HubReporter) throws {
        let match = PodMatch(vendorID: UInt16(configuration.pod.usbVendorID, radix: 16) ?? PodMatch.pidCodesVendor,
                             productID: UInt16(configuration.pod.usbProductID, radix: 16) ?? PodMatch.defaultProductID)
        discovery = try PodDiscovery(configuration: DiscoveryConfiguration(
            match: match, rescanInterval: .milliseconds(Int64(configuration.pod.rescanSeconds * 1000))))
        configuredSerial = configuration.pod.serial
        pinned = Mutex(configuration.pod.serial)
        preferUSB = configuration.pod.preferUSB
        self.reporter = reporter
        reporter.event("looking for \(opener.description) with USB id \(match) (udev, rescanning every \(configuration.pod.rescanSeconds) s)")
    }

    /// How the pod link opens its pod: whatever the directory knows under the served serial now.
    package var opener: any PodOpener { Opener(service: self) }

    package func run() async {
        let events = discovery.events
        let discovery = self.discovery
        await withGracefulShutdownHandler {
            for await event in events {
                await directory.apply(event)
                await report(event)
            }
        } onGracefulShutdown: {
            discovery.stop()
        }
        if !Task.isCancelled && !Task.isShuttingDownGracefully {
            // The udev thread ended on its own: without discovery no pod can come back, so
            // the hub stops (systemd restarts it) rather than wait for nothing.
            reporter.warning("udev discovery stopped unexpectedly; stopping the hub")
        }
        discovery.stop()
    }

    private func report(_ event: DiscoveryEvent) async {
        switch event {
        case .added(let pod):
            let served = pinned.withLock { $0 }
            if let serial = configuredSerial, pod.key != serial {
                reporter.event("ignoring pod \(pod.key) at \(pod.devnode): this hub serves pod \(serial) (pod.serial)")
            } else if let served, pod.key != served, await !directory.present(key: served).isEmpty {
                reporter.event("ignoring pod \(pod.key) at \(pod.devnode): this hub uses pod \(served) while it is plugged in "
                               + "(set pod.serial to choose)")
            } else {
                reporter.event("pod \(pod.key) plugged in at \(pod.devnode)")
            }
        case .removed(let pod):
            if configuredSerial == nil || pod.key == configuredSerial {
                reporter.event("pod \(pod.key) unplugged from \(pod.devnode)")
            }
        }
    }

    private struct Opener: PodOpener {
        let service: DiscoveryService
        var description: String { service.pinned.withLock { $0 }.map { "pod \($0)" } ?? "a pod" }

        func open() async throws -> any Transport {
            let key = service.pinned.withLock { $0 }
            let opener = DiscoveredPodOpener(directory: service.directory, key: key, preferUSB: service.preferUSB,
                                             orAnyPod: service.configuredSerial == nil)
            let (transport, pod) = try await opener.openPod()
            if pod.key != key {
                service.pinned.withLock { $0 = pod.key }
                if let key {
                    service.reporter.event("pod \(pod.key) replaces pod \(key), which is unplugged "
                                           + "(pod.serial is not set: the hub serves the pod plugged in)")
                }
            }
            return transport
        }
    }
}
