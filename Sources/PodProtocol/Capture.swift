/// The capture file: frames as received, with their receive times, for offline analysis
/// and for the virtual pod to replay (firmware-protocol.md §9).
///
/// Layout: an 8-byte magic `50 4F 44 43 41 50 00 01` ("PODCAP", 0, format 1), then
/// records, each `u64 receive time (µs since the Unix epoch, hub clock) | u8 direction |
/// u16 length | length bytes of unstuffed frame`, little-endian. A record cut short at
/// the end (the recorder was killed) is ignored and reported, never an error for the rest.
public enum Capture {
    public static let magic: [UInt8] = [0x50, 0x4F, 0x44, 0x43, 0x41, 0x50, 0x00, 0x01]
    static let recordHeaderSize = 11

    public enum Direction: UInt8, Sendable, Hashable {
        case podToHub = 0
        case hubToPod = 1
    }

    /// One recorded frame.
    public struct Record: Sendable, Hashable {
        public var receivedMicros: UInt64
        public var direction: Direction
        /// Unstuffed frame: header, payload, CRC.
        public var frame: [UInt8]
        public init(receivedMicros: UInt64, direction: Direction, frame: [UInt8]) {
            self.receivedMicros = receivedMicros
            self.direction = direction
            self.frame = frame
        }
    }

    public enum ReadError: Error, Sendable, Hashable, CustomStringConvertible {
        case notACapture
        case badDirection(offset: Int)
        case badLength(offset: Int)

        public var description: String {
            switch self {
            case .notACapture: "not a podbridge capture (magic bytes missing)"
            case .badDirection(let o): "corrupt capture: bad direction byte at offset \(o)"
            case .badLength(let o): "corrupt capture: impossible frame length at offset \(o)"
            }
        }
    }

    /// The bytes of one record.
    public static func encode(_ record: Record) -> [UInt8] {
        var w = ByteWriter(capacity: recordHeaderSize + record.frame.count)
        w.u64(record.receivedMicros)
        w.u8(record.direction.rawValue)
        w.u16(UInt16(clamping: record.frame.count))
        w.raw(Array(record.frame.prefix(Int(UInt16.max))))
        return w.bytes
    }

    /// All whole records of a capture; `truncatedTail` is true if the last one was cut off.
    public static func read(_ bytes: [UInt8]) throws(ReadError) -> (records: [Record], truncatedTail: Bool) {
        var records: [Record] = []
        let truncated = try forEachRecord(in: bytes) { time, direction, frame in
            records.append(Record(receivedMicros: time, direction: direction, frame: Array(frame)))
        }
        return (records, truncated)
    }

    /// Walks the records in place, without copying each frame (a night is ~250 MB):
    /// `body` gets the receive time, the direction and the unstuffed frame of each whole
    /// record. Returns whether the last record was cut short.
    public static func forEachRecord(
        in bytes: [UInt8], _ body: (UInt64, Direction, UnsafeRawBufferPointer) -> Void
    ) throws(ReadError) -> Bool {
        guard bytes.count >= magic.count, bytes[0..<magic.count].elementsEqual(magic) else { throw .notACapture }
        let result = bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Result<Bool, ReadError> in
            var offset = magic.count
            while offset < raw.count {
                guard raw.count - offset >= recordHeaderSize else { return .success(true) }
                let time = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                guard let direction = Direction(rawValue: raw[offset + 8]) else {
                    return .failure(.badDirection(offset: offset))
                }
                let length = Int(raw[offset + 9]) | Int(raw[offset + 10]) << 8
                guard length <= Wire.maxFrameSize else { return .failure(.badLength(offset: offset)) }
                let start = offset + recordHeaderSize
                guard raw.count - start >= length else { return .success(true) }
                body(time, direction, UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)]))
                offset = start + length
            }
            return .success(false)
        }
        return try result.get()
    }
}
