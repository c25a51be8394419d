import Testing
@testable import HomeKit

@Suite struct HAPSessionCipherTests {
    let secret = (0..<32).map { UInt8($0) }

    /// 2500 bytes go out as frames of 1024, 1024 and 452, each 2 + n + 16 bytes, and the other
    /// side reads them back, also when they arrive a few bytes at a time.
    @Test func framesOf1024RoundTrip() throws {
        var accessory = HAPSessionCipher(sharedSecret: secret, isAccessory: true)
        var controller = HAPSessionCipher(sharedSecret: secret, isAccessory: false)
        let message = (0..<2500).map { UInt8($0 % 256) }
        let wire = accessory.seal(message)
        #expect(wire.count == 2500 + 3 * 18)
        #expect(wire[0] == 0x00 && wire[1] == 0x04)
        var buffer: [UInt8] = []
        var received: [UInt8] = []
        for start in stride(from: 0, to: wire.count, by: 7) {
            buffer += wire[start..<min(start + 7, wire.count)]
            received += try controller.open(&buffer)
        }
        #expect(received == message)
        #expect(buffer.isEmpty)
        // The other direction uses the other key and its own counter.
        var back = controller.seal(Array("GET /accessories HTTP/1.1\r\n\r\n".utf8))
        #expect(try accessory.open(&back) == Array("GET /accessories HTTP/1.1\r\n\r\n".utf8))
    }

    @Test func tamperedOrReplayedFrameFails() throws {
        var accessory = HAPSessionCipher(sharedSecret: secret, isAccessory: true)
        var controller = HAPSessionCipher(sharedSecret: secret, isAccessory: false)
        var frame = controller.seal([1, 2, 3])
        var tampered = frame
        tampered[3] ^= 0xFF
        var copy = accessory
        #expect(throws: HAPSessionError.authentication(frame: 0)) { try copy.open(&tampered) }
        let replay = frame
        _ = try accessory.open(&frame)
        var again = replay
        #expect(throws: HAPSessionError.authentication(frame: 1)) { try accessory.open(&again) }
    }

    @Test func overlongFrameIsRefused() {
        var accessory = HAPSessionCipher(sharedSecret: secret, isAccessory: true)
        var buffer: [UInt8] = [0x01, 0x04] + [UInt8](repeating: 0, count: 20)
        #expect(throws: HAPSessionError.frameTooLong(1025)) { try accessory.open(&buffer) }
    }
}
