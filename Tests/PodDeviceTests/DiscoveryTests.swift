import Foundation
import Testing
@testable import PodDevice

extension UmockdevTests {
    @Suite("discovery under umockdev")
    struct Discovery {
        @Test("a mocked pod is enumerated by serial over both links; other USB serials are ignored")
        func enumeratesPod() throws {
            let testbed = Testbed()
            try testbed.addFixture("pod.umockdev")
            try testbed.addFixture("other-serial.umockdev")
            let pods = try PodDiscovery.enumerate()
            #expect(pods.count == 2)
            let serial = try #require(pods.first { $0.link == .serial })
            #expect(serial.key == "POD-0001")
            #expect(serial.serial == "POD-0001")
            #expect(serial.devnode == "/dev/ttyACM0")
            #expect(serial.syspath == FixturePaths.podTTY)
            let usb = try #require(pods.first { $0.link != .serial })
            #expect(usb.link == .usb(interface: 2))
            #expect(usb.key == "POD-0001")
            #expect(usb.devnode == "/dev/bus/usb/001/011")
            #expect(!pods.contains { $0.devnode.contains("ttyUSB") || $0.key == "FTDI-42" })
            withExtendedLifetime(testbed) {}
        }

        @Test("a configured product id selects other devices")
        func configurableMatch() throws {
            let testbed = Testbed()
            try testbed.addFixture("pod.umockdev")
            try testbed.addFixture("other-serial.umockdev")
            let pods = try PodDiscovery.enumerate(configuration: .init(match: PodMatch(vendorID: 0x0403, productID: 0x6001)))
            #expect(pods.map(\.key) == ["FTDI-42", "FTDI-42"])
            #expect(Set(pods.map(\.devnode)) == ["/dev/ttyUSB0", "/dev/bus/usb/001/012"])
            withExtendedLifetime(testbed) {}
        }

        @Test("add and remove uevents reach the monitor; a non-matching device is ignored")
        func hotplug() async throws {
            let testbed = Testbed()
            let discovery = try PodDiscovery(configuration: .init(rescanInterval: .zero, includeUSBInterface: false))
            defer { discovery.stop() }
            var events = discovery.events.makeAsyncIterator()
            try testbed.addFixture("other-serial.umockdev")
            testbed.uevent(FixturePaths.otherTTY, "add")
            try testbed.addFixture("pod.umockdev")
            testbed.uevent(FixturePaths.podTTY, "add")
            let added = await events.next()
            guard case .added(let pod)? = added else { Issue.record("expected an add, got \(String(describing: added))"); return }
            #expect(pod.key == "POD-0001")
            #expect(pod.devnode == "/dev/ttyACM0")
            testbed.uevent(FixturePaths.otherTTY, "remove")
            testbed.uevent(FixturePaths.podTTY, "remove")
            let removed = await events.next()
            #expect(removed == .removed(pod))
        }
    }
}
