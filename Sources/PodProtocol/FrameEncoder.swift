/// Turns messages into wire bytes: header, payload, CRC-32C, COBS, 0x00 delimiter.
///
/// One encoder per sending side of a link: it owns the sender's sequence counter, so
/// the receiver can count every frame that went missing.
public struct FrameEncoder: Sendable {
    /// The sequence number the next frame will carry.
    public var nextSequence: UInt16

    public init(firstSequence: UInt16 = 0) {
        nextSequence = firstSequence
    }

    public enum EncodingError: Error, Sendable, Hashable {
        /// The payload exceeds `Wire.maxPayloadSize`: split the data over more frames.
        case payloadTooLarge(Int)
    }

    /// Encodes one frame and advances the sequence number.
    public mutating func encode(_ message: Message, requestID: UInt16 = 0,
                                flags: FrameFlags = []) throws(EncodingError) -> [UInt8] {
        var out: [UInt8] = []
        try encode(message, requestID: requestID, flags: flags, appendingTo: &out)
        return out
    }

    /// Encodes one frame onto the end of `output` and advances the sequence number.
    public mutating func encode(_ message: Message, requestID: UInt16 = 0, flags: FrameFlags = [],
                                appendingTo output: inout [UInt8]) throws(EncodingError) {
        let header = FrameHeader(flags: flags, sequence: nextSequence, type: message.typeCode, requestID: requestID)
        let frame = try Self.frame(header: header, payload: MessageCodec.payload(of: message))
        frame.withUnsafeBytes { COBS.encode($0, appendingTo: &output) }
        nextSequence &+= 1
    }

    /// The unstuffed frame (header, payload, CRC) for a header and payload, as captures store it.
    public static func frame(header: FrameHeader, payload: [UInt8]) throws(EncodingError) -> [UInt8] {
        guard payload.count <= Wire.maxPayloadSize else { throw .payloadTooLarge(payload.count) }
        var w = ByteWriter(capacity: Wire.headerSize + payload.count + Wire.crcSize)
        w.u8(header.version)
        w.u8(header.flags.rawValue)
        w.u16(header.sequence)
        w.u8(header.type)
        w.u8(0)  // reserved
        w.u16(header.requestID)
        w.raw(payload)
        let crc = CRC32C.checksum(w.bytes)
        w.u32(crc)
        return w.bytes
    }
}
