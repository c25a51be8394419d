import Testing
@testable import HomeKit

@Suite struct TLV8Tests {
    @Test func shortItemsRoundTrip() throws {
        var tlv = TLV8()
        tlv.append(.state, byte: 1)
        tlv.append(.method, byte: 0)
        tlv.append(.identifier, Array("abc".utf8))
        #expect(tlv.encoded() == [0x06, 1, 1, 0x00, 1, 0, 0x01, 3, 0x61, 0x62, 0x63])
        #expect(try TLV8.decode(tlv.encoded()) == tlv)
    }

    /// A 384-byte public key goes out as 255 + 129 and is read back as one value.
    @Test func longValueIsFragmentedAndJoined() throws {
        let key = (0..<384).map { UInt8($0 % 251) }
        var tlv = TLV8()
        tlv.append(.publicKey, key)
        tlv.append(.state, byte: 2)
        let wire = tlv.encoded()
        #expect(wire.count == 2 + 255 + 2 + 129 + 3)
        #expect(wire[0] == 0x03 && wire[1] == 255 && wire[257] == 0x03 && wire[258] == 129)
        let decoded = try TLV8.decode(wire)
        #expect(decoded[.publicKey] == key)
        #expect(decoded.byte(.state) == 2)
        #expect(decoded.items.count == 2)
    }

    /// Two values of one type with a separator stay two (list-pairings' shape).
    @Test func separatorKeepsValuesApart() throws {
        var tlv = TLV8()
        tlv.append(.identifier, [1])
        tlv.append(.separator, [])
        tlv.append(.identifier, [2])
        let decoded = try TLV8.decode(tlv.encoded())
        #expect(decoded.items.map(\.value) == [[1], [], [2]])
    }

    @Test func exactly255BytesThenAnotherItemOfTheSameTypeIsJoined() throws {
        // The specification's rule: a 255-byte item continues into the next of the same type.
        let value = [UInt8](repeating: 7, count: 255)
        let decoded = try TLV8.decode([0x05, 255] + value + [0x05, 1, 9])
        #expect(decoded[.encryptedData] == value + [9])
    }

    @Test func truncatedInputIsAnError() {
        #expect(throws: TLV8Error.truncated(offset: 0)) { try TLV8.decode([0x06, 3, 1]) }
        #expect(throws: TLV8Error.truncated(offset: 3)) { try TLV8.decode([0x06, 1, 1, 0x07]) }
    }
}
