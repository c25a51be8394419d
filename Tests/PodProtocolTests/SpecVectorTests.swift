import Testing
import PodProtocol

/// The test vectors printed in firmware-protocol.md are the contract between pod and hub.
@Suite struct SpecVectorTests {
    @Test func everyVectorInTheSpecDecodesToItsMessageAndReencodesByteForByte() throws {
        let spec = try SpecVectors.fromSpec()
        #expect(spec.count >= SpecVectors.all.count)
        for v in SpecVectors.all {
            let wire = try #require(spec[v.name], "firmware-protocol.md has no vector \(v.name)")
            let frames = FrameDecoder().decode(wire)
            #expect(frames.count == 1, "\(v.name)")
            let frame = try #require(frames.first)
            #expect(frame.message == v.message, "\(v.name)")
            #expect(frame.header.sequence == v.sequence && frame.header.requestID == v.requestID, "\(v.name)")
            #expect(frame.header.flags == v.flags, "\(v.name)")
            var encoder = FrameEncoder(firstSequence: v.sequence)
            let again = try encoder.encode(v.message, requestID: v.requestID, flags: v.flags)
            #expect(again == wire, "\(v.name): \(SpecVectors.hex(again))")
        }
    }

    @Test func theProtocolInForceIsWrittenWithItsMinorRevision() {
        #expect(SpecVectors.infoV11.protocolDescription == "v1.1")
        #expect(SpecVectors.info.protocolDescription == "v1.0") // a v1.0 pod sends no minor
    }

    @Test func everyMessageTypeHasAVector() {
        let covered = Set(SpecVectors.all.map { $0.message.typeCode })
        for type in MessageType.allCases {
            #expect(covered.contains(type.rawValue), "no vector for \(type)")
            if type.isRequest { #expect(covered.contains(type.responseCode), "no response vector for \(type)") }
        }
    }

    @Test func badCRCVectorIsCountedAndDropped() throws {
        let spec = try SpecVectors.fromSpec()
        let bad = try #require(spec["bad-crc"])
        let decoder = FrameDecoder()
        #expect(decoder.decode(bad).isEmpty)
        #expect(decoder.counters.crcErrors == 1)
    }

    @Test func garbageBeforeAFrameIsSkipped() throws {
        let spec = try SpecVectors.fromSpec()
        let stream = try #require(spec["garbage-then-ping"])
        let decoder = FrameDecoder()
        let frames = decoder.decode(stream)
        #expect(frames.map(\.message) == [.ping(nonce: [0xDE, 0xAD, 0x00, 0x01])])
        #expect(decoder.counters.crcErrors + decoder.counters.malformed == 1)
    }

    @Test func checkValues() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
    }
}
