import Foundation
import Testing
@testable import PodDevice

extension UmockdevTests {
    @Suite("serial transport against a umockdev tty script")
    struct SerialReplay {
        @Test("the transport opens the mocked /dev/ttyACM0 (TIOCEXCL refused, flock enough) and follows the script")
        func scriptReplay() async throws {
            let testbed = Testbed()
            try testbed.addFixture("pod.umockdev")
            try testbed.loadScript(device: "/dev/ttyACM0", fixture: "ping.script")
            let serial = try SerialTransport(path: "/dev/ttyACM0")
            defer { serial.close() }
            // umockdev's mocked tty answers ENOTTY to TIOCEXCL; opening must not depend on it.
            #expect(serial.kernelExclusive == false)
            try await serial.write([0x00] + Array("ping".utf8) + [0x01, 0x02, 0x00])
            let reply = try await readExactly(8, from: serial)
            #expect(reply == [0x00] + Array("pong".utf8) + [0x03, 0x04, 0x00])
            withExtendedLifetime(testbed) {}
        }
    }
}
