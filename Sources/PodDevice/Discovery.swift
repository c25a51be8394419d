// Finding pods with libudev, at start-up and on hot-plug.
//
// libudev is not thread-safe: every udev object is created, used and freed on the one
// thread `PodDiscovery` starts, and only `DiscoveredPod` values leave it (AsyncStream).
// The netlink monitor is enabled *before* the first enumeration so a pod plugged in
// between the two is not missed; both sources are de-duplicated by syspath. Without a
// udev daemon (containers) the monitor hears nothing, so the thread also re-enumerates
// periodically and diffs against what it knows.
import CUdev
import SystemCalls
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public struct DiscoveryConfiguration: Sendable {
    public var match: PodMatch
    /// Re-enumeration period. `nil` means: only when no udev daemon runs (`/run/udev/control`
    /// absent), every 2 seconds; `.some(.zero)` disables rescans.
    public var rescanInterval: Duration?
    /// Also report the vendor bulk interface of a pod (libusb path), not only its tty.
    public var includeUSBInterface: Bool

    public init(match: PodMatch = .default, rescanInterval: Duration? = nil, includeUSBInterface: Bool = true) {
        self.match = match
        self.rescanInterval = rescanInterval
        self.includeUSBInterface = includeUSBInterface
    }

    var effectiveRescanMilliseconds: Int32 {
        if let r = rescanInterval {
            let ms = r.components.seconds * 1000 + r.components.attoseconds / 1_000_000_000_000_000
            return ms <= 0 ? -1 : Int32(clamping: ms)
        }
        return SystemCalls.fileExists("/run/udev/control") ? -1 : 2000
    }
}

public enum DiscoveryError: Error, Sendable, CustomStringConvertible {
    case udevUnavailable(String)
    public var description: String {
        switch self { case .udevUnavailable(let why): "libudev unavailable: \(why)" }
    }
}

/// Watches for pods on its own thread. `events` yields the pods present at start (as
/// `.added`) and then every arrival and departure. Call `stop()` to end it. Creating one
/// returns after the monitor is listening and the initial enumeration is queued.
public final class PodDiscovery: Sendable {
    public let events: AsyncStream<DiscoveryEvent>
    private let wake: (read: Int32, write: Int32)
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    public init(configuration: DiscoveryConfiguration = DiscoveryConfiguration()) throws {
        let wake = try SystemCalls.makeWakePipe()
        self.wake = wake
        let (stream, continuation) = AsyncStream<DiscoveryEvent>.makeStream(bufferingPolicy: .unbounded)
        events = stream
        let done = self.done
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread {
            DiscoveryLoop(configuration: configuration, wakeFD: wake.read, continuation: continuation, ready: ready).run()
            continuation.finish()
            done.signal()
        }
        thread.name = "podbridge.udev"
        thread.start()
        // Return once the monitor listens and the pods present are queued, so callers
        // (and tests) know later arrivals come through the monitor.
        ready.wait()
    }

    /// Stops the thread (it frees its udev objects) and finishes `events`. Idempotent; returns
    /// once the thread has exited.
    public func stop() {
        if stopped.exchange(true, ordering: .acquiringAndReleasing) { return }
        SystemCalls.wake(wake.write)
        done.wait()
        SystemCalls.close(wake.read)
        SystemCalls.close(wake.write)
    }

    deinit { stop() }

    /// One enumeration on the calling thread, with its own udev context (created, used and
    /// freed here). For `podbridge devices` and tests.
    public static func enumerate(configuration: DiscoveryConfiguration = DiscoveryConfiguration()) throws -> [DiscoveredPod] {
        guard let udev = udev_new() else { throw DiscoveryError.udevUnavailable("udev_new failed") }
        defer { udev_unref(udev) }
        return UdevScanner(udev: udev, configuration: configuration).enumerate().sorted { ($0.key, $0.devnode) < ($1.key, $1.devnode) }
    }
}

/// The loop that owns all udev objects of a `PodDiscovery`.
private struct DiscoveryLoop {
    let configuration: DiscoveryConfiguration
    let wakeFD: Int32
    let continuation: AsyncStream<DiscoveryEvent>.Continuation
    let ready: DispatchSemaphore

    func run() {
        var signalled = false
        defer { if !signalled { ready.signal() } }
        guard let udev = udev_new() else { return }
        defer { udev_unref(udev) }
        let scanner = UdevScanner(udev: udev, configuration: configuration)
        // Monitor first, enumerate second: nothing plugged in between is lost.
        let monitor = udev_monitor_new_from_netlink(udev, "udev")
        defer { if let monitor { udev_monitor_unref(monitor) } }
        var monitorFD: Int32 = -1
        if let monitor {
            udev_monitor_filter_add_match_subsystem_devtype(monitor, "tty", nil)
            udev_monitor_filter_add_match_subsystem_devtype(monitor, "usb", "usb_device")
            if udev_monitor_enable_receiving(monitor) == 0 { monitorFD = udev_monitor_get_fd(monitor) }
        }
        var known: [String: DiscoveredPod] = [:]  // syspath -> pod
        func apply(_ found: [DiscoveredPod]) {
            let now = Dictionary(found.map { ($0.syspath, $0) }, uniquingKeysWith: { a, _ in a })
            for (path, pod) in known where now[path] == nil {
                known[path] = nil
                continuation.yield(.removed(pod))
            }
            for pod in found where known[pod.syspath] == nil {
                known[pod.syspath] = pod
                continuation.yield(.added(pod))
            }
        }
        apply(scanner.enumerate())
        ready.signal()
        signalled = true

        let rescanMS = configuration.effectiveRescanMilliseconds
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        if monitorFD >= 0 { fds.append(pollfd(fd: monitorFD, events: Int16(POLLIN), revents: 0)) }
        while true {
            for i in fds.indices { fds[i].revents = 0 }
            guard let ready = try? SystemCalls.poll(&fds, timeoutMilliseconds: rescanMS) else { return }
            if fds[0].revents != 0 { return }
            if ready == 0 {
                apply(scanner.enumerate())
                continue
            }
            guard let monitor, fds.count > 1, fds[1].revents & Int16(POLLIN) != 0 else { continue }
            while let device = udev_monitor_receive_device(monitor) {
                defer { udev_device_unref(device) }
                guard let action = udev_device_get_action(device).map({ String(cString: $0) }),
                      let syspath = udev_device_get_syspath(device).map({ String(cString: $0) }) else { continue }
                switch action {
                case "remove":
                    // sysfs is already gone: the syspath table tells us which pod it was.
                    if let pod = known.removeValue(forKey: syspath) { continuation.yield(.removed(pod)) }
                case "add", "change", "bind":
                    guard known[syspath] == nil else { continue }
                    for pod in scanner.pods(for: device) where known[pod.syspath] == nil {
                        known[pod.syspath] = pod
                        continuation.yield(.added(pod))
                    }
                default:
                    continue
                }
            }
        }
    }
}

/// Turns udev devices into `DiscoveredPod`s. Reads sysfs attributes of the parent
/// usb_device first (present with or without a udev daemon) and udev properties second.
struct UdevScanner {
    let udev: OpaquePointer
    let configuration: DiscoveryConfiguration

    /// Every pod present: matching usb_devices by their sysfs ids, then their tty children.
    /// Works with or without a udev daemon (sysfs attributes need none).
    func enumerate() -> [DiscoveredPod] {
        var pods: [DiscoveredPod] = []
        forEach(subsystem: "usb", sysattrs: [("idVendor", hex4(configuration.match.vendorID)),
                                             ("idProduct", hex4(configuration.match.productID))]) { usb in
            guard udev_device_get_devtype(usb).map({ String(cString: $0) }) == "usb_device" else { return }
            pods.append(contentsOf: self.pods(for: usb))
            forEach(subsystem: "tty", parent: usb) { tty in pods.append(contentsOf: self.pods(for: tty)) }
        }
        return pods
    }

    private func forEach(subsystem: String, parent: OpaquePointer? = nil, sysattrs: [(String, String)] = [],
                         _ body: (OpaquePointer) -> Void) {
        guard let e = udev_enumerate_new(udev) else { return }
        defer { udev_enumerate_unref(e) }
        udev_enumerate_add_match_subsystem(e, subsystem)
        if let parent { udev_enumerate_add_match_parent(e, parent) }
        for (name, value) in sysattrs { udev_enumerate_add_match_sysattr(e, name, value) }
        guard udev_enumerate_scan_devices(e) >= 0 else { return }
        var entry = udev_enumerate_get_list_entry(e)
        while let current = entry {
            entry = udev_list_entry_get_next(current)
            guard let name = udev_list_entry_get_name(current), let device = udev_device_new_from_syspath(udev, name) else { continue }
            defer { udev_device_unref(device) }
            body(device)
        }
    }

    /// The pods a udev device stands for: a matching tty gives the serial link, a matching
    /// usb_device with a vendor-class interface gives the USB link.
    func pods(for device: OpaquePointer) -> [DiscoveredPod] {
        guard let subsystem = udev_device_get_subsystem(device).map({ String(cString: $0) }),
              let syspath = udev_device_get_syspath(device).map({ String(cString: $0) }) else { return [] }
        switch subsystem {
        case "tty":
            guard let devnode = udev_device_get_devnode(device).map({ String(cString: $0) }),
                  let usb = udev_device_get_parent_with_subsystem_devtype(device, "usb", "usb_device"),
                  let identity = identity(of: usb, fallback: device) else { return [] }
            return [DiscoveredPod(key: identity.key, serial: identity.serial, syspath: syspath, devnode: devnode,
                                  link: .serial, match: configuration.match)]
        case "usb":
            guard configuration.includeUSBInterface,
                  udev_device_get_devtype(device).map({ String(cString: $0) }) == "usb_device",
                  let devnode = udev_device_get_devnode(device).map({ String(cString: $0) }),
                  let identity = identity(of: device, fallback: device),
                  let interface = vendorInterface(of: device) else { return [] }
            return [DiscoveredPod(key: identity.key, serial: identity.serial, syspath: syspath, devnode: devnode,
                                  link: .usb(interface: interface), match: configuration.match)]
        default:
            return []
        }
    }

    /// nil unless the usb_device has the configured vendor/product id.
    private func identity(of usb: OpaquePointer, fallback: OpaquePointer) -> (key: String, serial: String?)? {
        func attr(_ d: OpaquePointer, _ name: String) -> String? {
            udev_device_get_sysattr_value(d, name).map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        func prop(_ d: OpaquePointer, _ name: String) -> String? {
            udev_device_get_property_value(d, name).map { String(cString: $0) }
        }
        guard let vendor = (attr(usb, "idVendor") ?? prop(fallback, "ID_VENDOR_ID")).flatMap({ UInt16($0, radix: 16) }),
              let product = (attr(usb, "idProduct") ?? prop(fallback, "ID_MODEL_ID")).flatMap({ UInt16($0, radix: 16) }),
              vendor == configuration.match.vendorID, product == configuration.match.productID else { return nil }
        let serial = (attr(usb, "serial") ?? prop(fallback, "ID_SERIAL_SHORT") ?? prop(usb, "ID_SERIAL_SHORT")).flatMap { $0.isEmpty ? nil : $0 }
        let usbPath = udev_device_get_syspath(usb).map { String(cString: $0) } ?? ""
        return (serial ?? usbPath, serial)
    }

    /// The interface number of the pod's vendor-class (0xff) interface, if it has one.
    private func vendorInterface(of usb: OpaquePointer) -> Int? {
        var found: Int?
        forEach(subsystem: "usb", parent: usb) { d in
            guard udev_device_get_devtype(d).map({ String(cString: $0) }) == "usb_interface",
                  udev_device_get_sysattr_value(d, "bInterfaceClass").map({ String(cString: $0) }) == "ff",
                  let number = udev_device_get_sysattr_value(d, "bInterfaceNumber").flatMap({ Int(String(cString: $0), radix: 16) })
            else { return }
            found = min(found ?? number, number)
        }
        return found
    }
}
