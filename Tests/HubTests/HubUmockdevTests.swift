// The daemon the way users run it: no --path, discovery through libudev, pods plugged in
// and out at run time. The devices are a umockdev testbed (process-global, so this suite is
// serialized and run alone under the preload by scripts/test-device.sh); the pod behind the
// mocked tty is the real virtual pod, joined to it by a byte relay.
import TestSupport
import CUmockdev
import Foundation
import Hub
import Logging
import NightModel
import PodDevice
import Synchronization
import Testing
import VirtualPod
#if canImport(Glibc)
import Glibc
#endif

@Suite("hub under umockdev", .serialized,
       .enabled(if: (ProcessInfo.processInfo.environment["LD_PRELOAD"] ?? "").contains("umockdev-preload"),
                "needs libumockdev-preload (scripts/test-device.sh)"))
struct HubUmockdevTests {
    /// The PodDevice fixture (a CDC-ACM pod, serial POD-0001, at usb1/1-1, ttyACM0), moved to
    /// another USB port and tty, and optionally given another serial.
    static func podDescription(port: Int, tty: Int, serial: String = "POD-0001") throws -> String {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../PodDeviceTests/Fixtures/pod.umockdev")
        return try String(contentsOf: fixture, encoding: .utf8)
            .replacingOccurrences(of: "usb1/1-1", with: "usb1/1-\(port)")
            .replacingOccurrences(of: "1-1:1.", with: "1-\(port):1.")
            .replacingOccurrences(of: "ttyACM0", with: "ttyACM\(tty)")
            .replacingOccurrences(of: "001/011", with: "001/0\(10 + port)")
            .replacingOccurrences(of: "DEVNUM=011", with: "DEVNUM=0\(10 + port)")
            .replacingOccurrences(of: "devnum=11", with: "devnum=\(10 + port)")
            .replacingOccurrences(of: "POD-0001", with: serial)
    }

    static func syspaths(port: Int, tty: Int) -> (usb: String, tty: String) {
        let usb = "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-\(port)"
        return (usb, usb + "/1-\(port):1.0/tty/ttyACM\(tty)")
    }

    @Test func podsArePluggedInUnpluggedAndMovedWhileTheDaemonRuns() async throws {
        let testbed = umockdev_testbed_new()!
        defer { g_object_unref(testbed) }
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        // A sleeper in bed from the start, so live readings flow the whole time.
        let speed = 60.0
        let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 0, getsOutBeforeEnd: 0, bathroomTrip: false))
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: "POD-0001"),
            night: NightConfig(seed: 7, duration: 3 * 3600, sides: [sleeper, .empty], noise: .normal, channelsPerSide: 1),
            speed: speed))
        let podFD = try Relay.openPod(try pod.start())
        defer { close(podFD); pod.stop() }

        let hub = try await Hub.start(state: dir.path("state"), speed: speed, serial: "POD-0001")
        defer { hub.running.cancel() }
        let (daemon, lines, running) = (hub.daemon, hub.lines, hub.running)
        func said() -> String { hub.said() }
        func connections() -> [String] { hub.connections() }
        func newestLive() -> Double? { daemon.bus.state.pods["POD-0001"]?.live[.left]?.time }

        // Started with no pod. Another pod (another serial) is plugged in first: ignored.
        #expect(await eventually { lines.contains("looking for pod POD-0001") })
        try add(testbed, try Self.podDescription(port: 2, tty: 2, serial: "POD-0002"))
        umockdev_testbed_uevent(testbed, Self.syspaths(port: 2, tty: 2).tty, "add")
        #expect(await eventually { lines.contains("ignoring pod POD-0002 at /dev/ttyACM2") }, "the hub said:\n\(said())")

        // The configured pod arrives at ttyACM0: found and handshaken there, readings flow.
        try add(testbed, try Self.podDescription(port: 1, tty: 0))
        let first = try Relay(device: "/dev/ttyACM0", testbed: testbed, pod: podFD)
        umockdev_testbed_uevent(testbed, Self.syspaths(port: 1, tty: 0).tty, "add")
        #expect(await eventually(120) { connections() == ["POD-0001 /dev/ttyACM0"] }, "the hub said:\n\(said())")
        #expect(await eventually(120) { newestLive() != nil }, "no live readings; the hub said:\n\(said())")

        // Unplugged: the tty hangs up and udev says it is gone; the hub reports it.
        first.unplug()
        umockdev_testbed_uevent(testbed, Self.syspaths(port: 1, tty: 0).tty, "remove")
        umockdev_testbed_remove_device(testbed, Self.syspaths(port: 1, tty: 0).usb)
        #expect(await eventually(120) { daemon.bus.state.pods["POD-0001"]?.connected == false }, "the hub said:\n\(said())")
        #expect(lines.contains("pod POD-0001 unplugged from /dev/ttyACM0"))
        let before = try #require(newestLive())

        // Back on another port and tty with the same serial: reopened there, the night goes on.
        try add(testbed, try Self.podDescription(port: 3, tty: 1))
        let second = try Relay(device: "/dev/ttyACM1", testbed: testbed, pod: podFD)
        defer { second.unplug() }
        umockdev_testbed_uevent(testbed, Self.syspaths(port: 3, tty: 1).tty, "add")
        #expect(await eventually(120) { connections() == ["POD-0001 /dev/ttyACM0", "POD-0001 /dev/ttyACM1"] },
                "the hub said:\n\(said())")
        #expect(await eventually(120) { (newestLive() ?? 0) > before + 60 }, "readings did not resume; the hub said:\n\(said())")
        #expect(!connections().contains { $0.hasPrefix("POD-0002") })
        running.cancel()
        _ = await running.result
    }

    /// Without `pod.serial`, as most users run it: the pod in use is kept while it is plugged
    /// in (a second pod beside it is ignored, and said so), and when it is gone the other pod
    /// is taken. A pod swapped for another used to be announced "plugged in" and never used
    /// until the hub was restarted.
    @Test func aPodSwappedForAnotherIsServedWithoutARestart() async throws {
        let testbed = umockdev_testbed_new()!
        defer { g_object_unref(testbed) }
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let speed = 60.0
        let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 0, getsOutBeforeEnd: 0, bathroomTrip: false))
        func virtualPod(_ serial: String) throws -> VirtualPod {
            try VirtualPod(configuration: VirtualPodConfiguration(
                identity: PodIdentity(serial: serial),
                night: NightConfig(seed: 8, duration: 3 * 3600, sides: [sleeper, .empty], noise: .normal, channelsPerSide: 1),
                speed: speed))
        }
        let podA = try virtualPod("POD-0001"), podB = try virtualPod("POD-0002")
        let fdA = try Relay.openPod(try podA.start()), fdB = try Relay.openPod(try podB.start())
        defer { close(fdA); close(fdB); podA.stop(); podB.stop() }

        let hub = try await Hub.start(state: dir.path("state"), speed: speed, serial: nil)
        defer { hub.running.cancel() }
        let (daemon, lines, running) = (hub.daemon, hub.lines, hub.running)
        func said() -> String { hub.said() }
        func connections() -> [String] { hub.connections() }

        #expect(await eventually { lines.contains("looking for a pod") })
        try add(testbed, try Self.podDescription(port: 1, tty: 0))
        let first = try Relay(device: "/dev/ttyACM0", testbed: testbed, pod: fdA)
        umockdev_testbed_uevent(testbed, Self.syspaths(port: 1, tty: 0).tty, "add")
        #expect(await eventually(120) { connections() == ["POD-0001 /dev/ttyACM0"] }, "the hub said:\n\(said())")

        // A second pod beside it: ignored while the first is plugged in, and said so.
        try add(testbed, try Self.podDescription(port: 2, tty: 2, serial: "POD-0002"))
        let second = try Relay(device: "/dev/ttyACM2", testbed: testbed, pod: fdB)
        defer { second.unplug() }
        umockdev_testbed_uevent(testbed, Self.syspaths(port: 2, tty: 2).tty, "add")
        #expect(await eventually { lines.contains("ignoring pod POD-0002 at /dev/ttyACM2: this hub uses pod POD-0001") },
                "the hub said:\n\(said())")

        // The first pod is pulled out: the second is taken, without a restart.
        first.unplug()
        umockdev_testbed_uevent(testbed, Self.syspaths(port: 1, tty: 0).tty, "remove")
        umockdev_testbed_remove_device(testbed, Self.syspaths(port: 1, tty: 0).usb)
        #expect(await eventually(120) { connections() == ["POD-0001 /dev/ttyACM0", "POD-0002 /dev/ttyACM2"] },
                "the hub said:\n\(said())")
        #expect(lines.contains("pod POD-0002 replaces pod POD-0001, which is unplugged"), "the hub said:\n\(said())")
        #expect(await eventually(120) { daemon.bus.state.pods["POD-0002"]?.live[.left]?.time != nil },
                "no readings from the second pod; the hub said:\n\(said())")
        running.cancel()
        _ = await running.result
    }

    /// The daemon as `podbridge run` assembles it without `--path`, on a fast link timing,
    /// with what it said and every event it published recorded.
    struct Hub {
        let daemon: HubDaemon
        let lines: ReportedLines
        let heard: BusRecorder
        let running: Task<Void, any Error>

        static func start(state: String, speed: Double, serial: String?) async throws -> Hub {
            var config = HubConfiguration()
            config.stateDirectory = state
            config.timeZone = "UTC"
            config.pod.serial = serial
            config.pod.rescanSeconds = 1
            let lines = ReportedLines()
            let reporter = HubReporter(logger: Logger(label: "hub-umockdev") { _ in CapturingLogHandler(sink: lines) }, console: false)
            let daemon = try await HubDaemon.assemble(
                configuration: config, clock: HubClock(start: Date(timeIntervalSince1970: 1_794_866_400), speed: speed),
                reporter: reporter,
                timing: LinkTiming(responseTimeout: .milliseconds(500), reconnectInitialDelay: .milliseconds(50),
                                   reconnectMaxDelay: .milliseconds(500)))
            let heard = BusRecorder(daemon.bus.subscribe(name: "test", bufferSize: 1 << 20))
            return Hub(daemon: daemon, lines: lines, heard: heard, running: Task { try await daemon.run(stopSignals: nil) })
        }

        func said() -> String { lines.all.suffix(15).joined(separator: "\n") }
        /// "serial endpoint" of every connection, in order.
        func connections() -> [String] {
            heard.soFar.compactMap { if case .podConnected(let p, let endpoint, _) = $0 { "\(p.serial) \(endpoint)" } else { nil } }
        }
    }

    private func add(_ testbed: UnsafeMutablePointer<UMockdevTestbed>, _ description: String) throws {
        var error: UnsafeMutablePointer<GError>?
        if umockdev_testbed_add_from_string(testbed, description, &error) == 0 {
            defer { g_error_free(error) }
            Issue.record("umockdev: \(error.map { String(cString: $0.pointee.message) } ?? "add_from_string failed")")
            throw CancellationError()
        }
    }
}

/// Copies bytes both ways between the far (master) side of a mocked tty and the virtual
/// pod's pty, on a thread of its own: the USB cable of this test. `unplug()` stops it and
/// hangs the mocked tty up, as a real CDC-ACM tty does when the pod is pulled out.
final class Relay: Sendable {
    private let master: Int32
    private let pod: Int32
    private let wake: (Int32, Int32)
    private let done = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    /// Opens the pod's side of the cable: its pty, raw, non-blocking; kept open across
    /// unplugs (the pod itself stays powered).
    static func openPod(_ tty: String) throws -> Int32 {
        let fd = open(tty, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw CancellationError() }
        var raw = termios()
        tcgetattr(fd, &raw)
        cfmakeraw(&raw)
        tcsetattr(fd, TCSANOW, &raw)
        return fd
    }

    init(device: String, testbed: UnsafeMutablePointer<UMockdevTestbed>, pod: Int32) throws {
        master = umockdev_testbed_get_dev_fd(testbed, device)
        self.pod = pod
        guard master >= 0 else { throw CancellationError() }
        var pipeFDs: [Int32] = [0, 0]
        _ = pipe(&pipeFDs)
        wake = (pipeFDs[0], pipeFDs[1])
        let (master, pod, wakeRead, done) = (master, pod, wake.0, done)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        Thread {
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: master, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: pod, events: Int16(POLLIN), revents: 0)]
            var buffer = [UInt8](repeating: 0, count: 4096)
            loop: while true {
                for i in fds.indices { fds[i].revents = 0 }
                if poll(&fds, 3, 1000) < 0 && errno != EINTR { break }
                if fds[0].revents != 0 { break }
                for (from, to) in [(master, pod), (pod, master)] {
                    let n = read(from, &buffer, buffer.count)
                    if n > 0 { Relay.writeAll(to, Array(buffer[0..<n])) }
                    if n == 0 { break loop }
                    // A tty nobody has open yet reads EIO: wait for the hub to open it.
                    if n < 0 && errno == EIO { usleep(10_000) }
                }
            }
            done.signal()
        }.start()
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n > 0 { offset += n } else if errno == EAGAIN || errno == EINTR { usleep(1000) } else { return }
        }
    }

    /// Stops copying and hangs up the mocked tty: its master is replaced by /dev/null, so the
    /// last reference to the pty master goes and the hub's reads end with EIO.
    func unplug() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        _ = write(wake.1, [UInt8(1)], 1)
        done.wait()
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        dup2(null, master)
        close(null)
        close(wake.0)
        close(wake.1)
    }
}
