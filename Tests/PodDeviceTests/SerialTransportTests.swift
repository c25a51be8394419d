import Foundation
import Testing
import SystemCalls
@testable import PodDevice

/// Reads from a transport until `count` bytes arrived.
func readExactly(_ count: Int, from transport: some Transport) async throws -> [UInt8] {
    var bytes: [UInt8] = []
    while bytes.count < count { bytes += try await transport.read() }
    return bytes
}

@Suite("serial transport over a real pty")
struct SerialTransportTests {
    @Test("bytes flow both ways unchanged, including 0x00, CR, LF and ^C (raw mode)")
    func roundTrip() async throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let serial = try SerialTransport(path: pty.path)
        defer { serial.close() }
        let awkward: [UInt8] = [0x00, 0x0D, 0x0A, 0x03, 0x11, 0x13, 0x7F, 0xFF, 0x04, 0x1A]
        try await pty.write(awkward)
        #expect(try await readExactly(awkward.count, from: serial) == awkward)
        let big = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        async let echoed = readExactly(big.count, from: pty)
        try await serial.write(big)
        #expect(try await echoed == big)
    }

    @Test("a second open of the same tty is refused (flock)")
    func exclusive() async throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let first = try SerialTransport(path: pty.path)
        defer { first.close() }
        #expect(throws: TransportError.self) { try SerialTransport(path: pty.path) }
        first.close()
        let again = try SerialTransport(path: pty.path)
        again.close()
    }

    @Test("closing the far side is a disconnect, not a failure")
    func unplug() async throws {
        let pty = try PseudoTerminal()
        let serial = try SerialTransport(path: pty.path)
        defer { serial.close() }
        try await pty.write([1, 2, 3])
        #expect(try await readExactly(3, from: serial) == [1, 2, 3])
        pty.close()
        await #expect {
            while true { _ = try await serial.read() }
        } throws: { error in
            if case .disconnected = error as? TransportError { return true }
            return false
        }
    }

    @Test("stale bytes written before open are flushed")
    func flushOnOpen() async throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        try await pty.write(Array("stale".utf8))  // in the slave's input queue once write returns
        let serial = try SerialTransport(path: pty.path)
        defer { serial.close() }
        try await pty.write([0x42])
        #expect(try await serial.read() == [0x42])
    }

    @Test("opening a missing node fails with a clear error")
    func missing() {
        #expect(throws: TransportError.failed(.system(SystemError(call: "open(/dev/does-not-exist)", errno: ENOENT)))) {
            try SerialTransport(path: "/dev/does-not-exist")
        }
    }

    @Test("close ends a pending read with .closed")
    func closeEndsRead() async throws {
        let pty = try PseudoTerminal()
        defer { pty.close() }
        let serial = try SerialTransport(path: pty.path)
        let pending = Task { try await serial.read() }
        try await Task.sleep(for: .milliseconds(10))
        serial.close()
        await #expect(throws: TransportError.closed) { _ = try await pending.value }
    }
}
