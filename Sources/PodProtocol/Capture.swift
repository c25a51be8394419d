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

extension Capture {
    /// Walks the records of a capture fed in chunks of any size (a file read piece by
    /// piece), so a night is never held whole: only a record split across two chunks is
    /// copied, into a carry of at most one record. Gives exactly the records, errors
    /// (with file offsets) and cut-short tail that `forEachRecord(in:)` gives on the whole
    /// file.
    public struct RecordReader: Sendable {
        /// Bytes of the magic or of one record split across chunks.
        private var carry: [UInt8] = []
        /// File offset of the first byte not yet consumed (carry included).
        private var offset = 0
        private var magicSeen = false
        private var failed: ReadError?

        public init() {}

        /// Bytes fed so far.
        public var bytesRead: Int { offset + carry.count }

        /// Feeds the next chunk; `body` gets each record completed by it, in order. After
        /// an error, the reader stays failed.
        public mutating func feed(
            _ chunk: UnsafeRawBufferPointer, _ body: (UInt64, Direction, UnsafeRawBufferPointer) -> Void
        ) throws(ReadError) {
            if let failed { throw failed }
            do {
                try walk(chunk, body)
            } catch {
                failed = error
                carry = []
                throw error
            }
        }

        private mutating func walk(
            _ chunk: UnsafeRawBufferPointer, _ body: (UInt64, Direction, UnsafeRawBufferPointer) -> Void
        ) throws(ReadError) {
            var rest = chunk
            if !magicSeen {
                let take = min(magic.count - carry.count, rest.count)
                carry += rest.prefix(take)
                rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                guard carry.elementsEqual(magic.prefix(carry.count)) else { throw .notACapture }
                guard carry.count == magic.count else { return }
                magicSeen = true
                carry.removeAll(keepingCapacity: true)
                offset = magic.count
            }
            // Complete the record split at the previous chunk's end, from this chunk.
            if !carry.isEmpty {
                if carry.count < recordHeaderSize {
                    let take = min(recordHeaderSize - carry.count, rest.count)
                    carry += rest.prefix(take)
                    rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                    guard carry.count == recordHeaderSize else { return }
                }
                let start = offset
                let header = try carry.withUnsafeBytes { h in
                    Result { () throws(ReadError) in try Self.header(h, at: 0, offset: start) }
                }.get()
                let missing = recordHeaderSize + header.length - carry.count
                let take = min(missing, rest.count)
                carry += rest.prefix(take)
                rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                guard take == missing else { return }
                carry.withUnsafeBytes { r in
                    body(header.time, header.direction, UnsafeRawBufferPointer(rebasing: r[recordHeaderSize...]))
                }
                offset += carry.count
                carry.removeAll(keepingCapacity: true)
            }
            // Whole records straight from the chunk; the split one at its end is carried.
            var at = 0
            while rest.count - at >= recordHeaderSize {
                let header = try Self.header(rest, at: at, offset: offset)
                let start = at + recordHeaderSize
                guard rest.count - start >= header.length else { break }
                body(header.time, header.direction, UnsafeRawBufferPointer(rebasing: rest[start..<(start + header.length)]))
                offset += recordHeaderSize + header.length
                at = start + header.length
            }
            carry += rest[at...]
        }

        /// Feeds the next chunk from an array.
        public mutating func feed(
            _ chunk: [UInt8], _ body: (UInt64, Direction, UnsafeRawBufferPointer) -> Void
        ) throws(ReadError) {
            try chunk.withUnsafeBytes { raw in
                Result { () throws(ReadError) in try feed(raw, body) }
            }.get()
        }

        /// The end of the file: whether the last record was cut short. Throws
        /// `notACapture` for a file shorter than the magic.
        public func finish() throws(ReadError) -> Bool {
            if let failed { throw failed }
            guard magicSeen else { throw .notACapture }
            return !carry.isEmpty
        }

        /// The record header at `at` in `raw`, which is at file offset `offset`.
        private static func header(
            _ raw: UnsafeRawBufferPointer, at: Int, offset: Int
        ) throws(ReadError) -> (time: UInt64, direction: Direction, length: Int) {
            let time = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))
            guard let direction = Direction(rawValue: raw[at + 8]) else { throw .badDirection(offset: offset) }
            let length = Int(raw[at + 9]) | Int(raw[at + 10]) << 8
            guard length <= Wire.maxFrameSize else { throw .badLength(offset: offset) }
            return (time, direction, length)
        }
    }
}
