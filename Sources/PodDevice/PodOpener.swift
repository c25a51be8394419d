// How a connection (re)opens its pod: a fixed tty path, or whatever discovery currently
// knows under the pod's serial. Reconnecting asks the opener again each time, so a pod
// that comes back as /dev/ttyACM1 instead of ttyACM0 is found by its serial.

/// Opens a transport to one pod. Throwing means "not available now": the connection
/// backs off and asks again.
package protocol PodOpener: Sendable {
    var description: String { get }
    func open() async throws -> any Transport
}

/// A tty given by path (`podbridge stream --path`, the virtual pod's pty or its symlink).
package struct PathOpener: PodOpener {
    package let path: String
    package init(path: String) { self.path = path }
    package var description: String { path }
    package func open() async throws -> any Transport { try SerialTransport(path: path) }
}

/// A pod found by discovery, keyed on its serial (or the first pod seen when `key` is nil
/// until one connects). Waits for the pod to be present; prefers the tty over the USB
/// interface unless told otherwise. With `orAnyPod`, another pod is taken while the pod
/// `key` is not plugged in (a hub without `pod.serial` whose pod was swapped).
package struct DiscoveredPodOpener: PodOpener {
    package let directory: PodDirectory
    package let key: String?
    package let preferUSB: Bool
    package let orAnyPod: Bool
    /// How long a pod whose USB interface appeared first is given for its tty to follow
    /// (udev announces the USB device before the tty on it).
    package let ttyGrace: Duration
    package init(directory: PodDirectory, key: String?, preferUSB: Bool = false, orAnyPod: Bool = false,
                 ttyGrace: Duration = .seconds(2)) {
        self.directory = directory
        self.key = key
        self.preferUSB = preferUSB
        self.orAnyPod = orAnyPod
        self.ttyGrace = ttyGrace
    }
    package var description: String { key.map { "pod \($0)" } ?? "a pod" }

    package func open() async throws -> any Transport { try await openPod().transport }

    /// Opens the pod and says which of its links it opened.
    package func openPod() async throws -> (transport: any Transport, pod: DiscoveredPod) {
        var links = if orAnyPod, let key { await directory.waitForPod(preferring: key) } else { await directory.waitForPod(key: key) }
        if links.isEmpty { throw CancellationError() }
        if !preferUSB, !links.contains(where: { $0.link == .serial }), let found = links.first?.key {
            let deadline = ContinuousClock.now + ttyGrace
            while ContinuousClock.now < deadline, !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                let now = await directory.present(key: found)
                if now.contains(where: { $0.link == .serial }) { links = now; break }
            }
        }
        let ordered = links.sorted { a, b in (a.link == .serial) != preferUSB && (b.link == .serial) == preferUSB }
        // The preferred link's failure is the one reported: a tty the hub's user may not
        // open says what to do about it; the USB interface's failure tried after it did not.
        var firstError: (any Error)?
        for pod in ordered {
            do {
                switch pod.link {
                case .serial: return (try SerialTransport(path: pod.devnode), pod)
                case .usb(let interface): return (try USBTransport(devnode: pod.devnode, interface: interface), pod)
                }
            } catch {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? TransportError.failed(.noLink)
    }
}

/// The pods present now, fed by a `PodDiscovery`; lets openers wait for a serial.
package actor PodDirectory {
    private struct Waiter {
        let id: Int
        let key: String?
        let continuation: CheckedContinuation<[DiscoveredPod], Never>
    }
    private var pods: [String: DiscoveredPod] = [:]  // syspath -> pod
    private var waiters: [Waiter] = []
    private var nextWaiter = 0

    package init() {}

    /// Follows `discovery` until its events end.
    package init(following discovery: PodDiscovery) {
        self.init()
        let events = discovery.events
        Task { await self.follow(events) }
    }

    private func follow(_ events: AsyncStream<DiscoveryEvent>) async {
        for await event in events { apply(event) }
    }

    package func apply(_ event: DiscoveryEvent) {
        switch event {
        case .added(let pod): pods[pod.syspath] = pod
        case .removed(let pod): pods[pod.syspath] = nil
        }
        var still: [Waiter] = []
        for waiter in waiters {
            let links = present(key: waiter.key)
            if links.isEmpty { still.append(waiter) } else { waiter.continuation.resume(returning: links) }
        }
        waiters = still
    }

    /// Every link of the pod `key` (or of the first pod, by key order) present now.
    package func present(key: String?) -> [DiscoveredPod] {
        let all = pods.values.sorted { ($0.key, $0.devnode) < ($1.key, $1.devnode) }
        guard let key else { return all.first.map { first in all.filter { $0.key == first.key } } ?? [] }
        return all.filter { $0.key == key }
    }

    package var all: [DiscoveredPod] { pods.values.sorted { ($0.key, $0.devnode) < ($1.key, $1.devnode) } }

    /// The pod `key` if it is present, else any pod present, else the first pod plugged in.
    package func waitForPod(preferring key: String) async -> [DiscoveredPod] {
        let mine = present(key: key)
        if !mine.isEmpty { return mine }
        let any = await waitForPod(key: nil)
        let now = present(key: key)
        return now.isEmpty ? any : now
    }

    /// Returns once the pod is present (immediately if it is); empty if the task is
    /// cancelled first (a daemon stopping while no pod is plugged in).
    package func waitForPod(key: String?) async -> [DiscoveredPod] {
        let now = present(key: key)
        if !now.isEmpty || Task.isCancelled { return now }
        let id = nextWaiter
        nextWaiter += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled { continuation.resume(returning: []) } else {
                    waiters.append(Waiter(id: id, key: key, continuation: continuation))
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: [])
    }
}
