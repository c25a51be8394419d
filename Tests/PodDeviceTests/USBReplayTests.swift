import Foundation
import Testing
@testable import PodDevice

extension UmockdevTests {
    @Suite("USB transport against a umockdev usbdevfs replay")
    struct USBReplay {
        @Test("wraps the udev-found node, claims the vendor interface, bulk OUT then bulk IN")
        func bulkReplay() async throws {
            let testbed = Testbed()
            try testbed.addFixture("pod.umockdev")
            try testbed.loadIoctl(device: "/dev/bus/usb/001/011", fixture: "ping.ioctl")
            let pod = try #require(try PodDiscovery.enumerate().first { $0.link != .serial })
            guard case .usb(let number) = pod.link else { Issue.record("not a usb link"); return }
            let usb = try USBTransport(devnode: pod.devnode, interface: number)
            defer { usb.close() }
            #expect(usb.interfaceNumber == 2)
            #expect(usb.inEndpoint == 0x83)
            #expect(usb.outEndpoint == 0x03)
            try await usb.write([0x00] + Array("ping".utf8) + [0x01, 0x02, 0x00])
            let reply = try await readExactly(8, from: usb)
            #expect(Array(reply.prefix(8)) == [0x00] + Array("pong".utf8) + [0x03, 0x04, 0x00])
            withExtendedLifetime(testbed) {}
        }
    }
}

extension UmockdevTests.USBReplay {
    @Test("an URB completing with ENODEV (unplug) ends reads with .disconnected, and close still releases")
    func unplug() async throws {
        let testbed = Testbed()
        try testbed.addFixture("pod.umockdev")
        try testbed.loadIoctl(device: "/dev/bus/usb/001/011", fixture: "unplug.ioctl")
        let usb = try USBTransport(devnode: "/dev/bus/usb/001/011")
        defer { usb.close() }
        try await usb.write([0x00] + Array("ping".utf8) + [0x01, 0x02, 0x00])
        #expect(try await readExactly(8, from: usb) == [0x00] + Array("pong".utf8) + [0x03, 0x04, 0x00])
        await #expect {
            while true { _ = try await usb.read() }
        } throws: { error in
            if case .disconnected(let why) = error as? TransportError { return why.description.contains("NO_DEVICE") }
            return false
        }
        await #expect(throws: TransportError.self) { try await usb.write([1]) }
        withExtendedLifetime(testbed) {}
    }
}
