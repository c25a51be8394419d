import CUmockdev
import Foundation
import PodProtocol
import Testing
@testable import PodDevice
import SystemCalls
#if canImport(Glibc)
import Glibc
#endif

extension UmockdevTests {
    @Suite("discovery to connection under umockdev")
    struct DiscoveredConnection {
        @Test("a pod found by udev under its serial is opened through its mocked tty and handshaken")
        func discoveredPodStreams() async throws {
            let testbed = Testbed()
            try testbed.addFixture("pod.umockdev")
            // The far side of umockdev's /dev/ttyACM0 is a pty master: the pod peer speaks there.
            let master = dup(umockdev_testbed_get_dev_fd(testbed.handle, "/dev/ttyACM0"))
            try #require(master >= 0)
            try SystemCalls.setNonBlocking(master)
            // Hold the tty open as a real device's driver would: a pty master with no open
            // slave reads EIO, which would end the pod peer before the hub opens it.
            let holder = open("/dev/ttyACM0", O_RDWR | O_NOCTTY | O_CLOEXEC)
            try #require(holder >= 0)
            defer { close(holder) }
            let pod = ScriptedPod(link: try PodEndOfTTY(fd: master), path: "/dev/ttyACM0", serial: "POD-0001")
            await pod.start()

            let discovery = try PodDiscovery(configuration: .init(rescanInterval: .zero, includeUSBInterface: false))
            defer { discovery.stop() }
            let directory = PodDirectory(following: discovery)
            let connection = PodConnection(opener: DiscoveredPodOpener(directory: directory, key: "POD-0001"),
                                           expectedSerial: "POD-0001", timing: quickTiming)
            let runner = Task { try await connection.run() }
            defer { runner.cancel() }
            var events = connection.events.makeAsyncIterator()
            guard case .connecting(let endpoint)? = await next(&events, where: { if case .connecting = $0 { true } else { false } }) else {
                Issue.record("never opened"); return
            }
            #expect(endpoint == "/dev/ttyACM0")
            _ = await next(&events, where: isStreaming)
            await pod.sendPiezo(side: .right)
            guard case .frame(let frame, _)? = await next(&events, where: { if case .frame = $0 { true } else { false } }) else {
                Issue.record("no frame"); return
            }
            #expect(frame.message.typeCode == MessageType.piezo.rawValue)
            #expect(await pod.count(of: .hello) == 1)
            // Tear down in order, before the testbed goes: the hub's link closes its mocked tty,
            // then the pod end; a descriptor closed after umockdev removed its testbed could
            // crash the dispatch thread that still watched it.
            runner.cancel()
            _ = await runner.result
            await pod.unplug()
            withExtendedLifetime(testbed) {}
        }
    }
}

/// A transport over an already-open descriptor (the pod side of a mocked tty).
final class PodEndOfTTY: Transport {
    let endpoint = "umockdev tty master"
    private let stream: DescriptorStream
    init(fd: Int32) throws { stream = try DescriptorStream(fd: fd, label: endpoint) }
    func read() async throws -> [UInt8] { try await stream.read() }
    func write(_ bytes: [UInt8]) async throws { try await stream.write(bytes) }
    func close() { stream.close() }
}
