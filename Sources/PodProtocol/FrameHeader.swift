/// The fixed part of every frame, and the limits a receiver enforces.
///
/// A frame before stuffing is `header (8) | payload (0…1012) | CRC-32C (4)`, all
/// integers little-endian. See firmware-protocol.md §3.
public struct FrameHeader: Sendable, Hashable {
    /// Frame format version; v1 receivers drop frames of any other version.
    public var version: UInt8
    public var flags: FrameFlags
    /// Per-sender counter, +1 for every frame sent, wrapping at 65536.
    public var sequence: UInt16
    /// Raw message type (requests 0x01–0x0F, streams 0x10–0x1F, responses request|0x80).
    public var type: UInt8
    /// Matches a response to its request; 0 on streamed messages and events.
    public var requestID: UInt16

    public init(version: UInt8 = Wire.version, flags: FrameFlags = [], sequence: UInt16,
                type: UInt8, requestID: UInt16 = 0) {
        self.version = version
        self.flags = flags
        self.sequence = sequence
        self.type = type
        self.requestID = requestID
    }
}

/// Header flag bits. Bits 0–3 are *compatible* (a receiver that does not know one ignores
/// it); bits 4–7 are *incompatible* (a receiver that does not know one drops the frame).
public struct FrameFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// This request repeats an earlier one with the same request id (a retry after a
    /// timeout); the pod answers it from its cache instead of acting twice.
    public static let retransmit = FrameFlags(rawValue: 0x01)

    /// Flags this implementation understands.
    public static let known: FrameFlags = [.retransmit]
    /// Bits a receiver must not ignore.
    public static let incompatibleMask: UInt8 = 0xF0
}

/// Constants of the v1 wire format.
public enum Wire {
    /// The protocol version this implementation speaks (the frame's version byte).
    public static let version: UInt8 = 1
    /// The highest minor revision of `version` this implementation speaks (v1.1): agreed in
    /// HELLO by appended fields, so v1.0 peers, which ignore them, keep working.
    public static let minorVersion: UInt8 = 1
    /// v1.1: a streaming pod sends at least one frame a second (firmware-protocol.md §7.7).
    public static let livenessIntervalSeconds = 1
    public static let headerSize = 8
    public static let crcSize = 4
    /// Largest frame before stuffing (header + payload + CRC).
    public static let maxFrameSize = 1024
    public static let maxPayloadSize = maxFrameSize - headerSize - crcSize
    /// Largest stuffed frame, without its delimiter.
    public static let maxEncodedSize = COBS.maxEncodedLength(maxFrameSize)
    /// The pod's sample clock: ticks per second of the counter every streamed message carries.
    public static let tickRate = 500
}
