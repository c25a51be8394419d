/// The incremental receiver: bytes in any split, frames out, nothing ever traps.
///
/// It unstuffs COBS as bytes arrive (no second pass), checks size, CRC, version and
/// flags, tracks the sender's sequence numbers and counts everything it had to drop,
/// so a damaged frame costs exactly that frame and the link's health is visible.
public final class FrameDecoder {
    public private(set) var counters = DecoderCounters()
    /// Also hand out each frame's unstuffed bytes (for recording captures); off by default.
    public var keepsRawFrames = false

    // Unstuffed bytes of the frame being received.
    private let buffer: UnsafeMutableRawBufferPointer
    private var length = 0
    // Data bytes left in the current COBS block; 0 means the next byte is a code byte.
    private var blockRemaining = 0
    // The current block ended below 0xFF, so a zero follows it unless the frame ends.
    private var pendingZero = false
    // Skipping to the next delimiter after an oversize or invalid frame.
    private var discarding = false
    // Some byte other than a delimiter arrived since the last delimiter.
    private var inFrame = false
    private var lastSequence: UInt16?

    public init() {
        buffer = .allocate(byteCount: Wire.maxFrameSize + 1, alignment: 8)
    }

    deinit { buffer.deallocate() }

    /// Forget the sender's sequence (after a reconnect): the next frame sets a new baseline.
    public func resetSequence() { lastSequence = nil }

    /// Drops any partial frame (after a disconnect) without counting it.
    public func reset() {
        length = 0
        blockRemaining = 0
        pendingZero = false
        discarding = false
        inFrame = false
        lastSequence = nil
    }

    /// Feeds bytes; calls `onFrame` for every valid frame completed by them.
    public func decode(_ bytes: UnsafeRawBufferPointer, _ onFrame: (DecodedFrame) -> Void) {
        counters.bytes &+= UInt64(bytes.count)
        guard let base = bytes.baseAddress else { return }
        let out = buffer.baseAddress!
        let n = bytes.count
        var i = 0
        while i < n {
            let byte = base.load(fromByteOffset: i, as: UInt8.self)
            i += 1
            if byte == 0 {
                endFrame(onFrame)
                continue
            }
            inFrame = true
            if discarding { continue }
            if blockRemaining == 0 {
                if pendingZero { append(0, out) }
                blockRemaining = Int(byte) - 1
                pendingZero = byte != 0xFF
                continue
            }
            // Copy the rest of this block, or as much of it as arrived, in one go.
            let run = min(blockRemaining, n - i + 1)
            var k = 0
            var hitZero = false
            while k < run {
                let b = base.load(fromByteOffset: i - 1 + k, as: UInt8.self)
                if b == 0 { hitZero = true; break }
                k += 1
            }
            if length + k > Wire.maxFrameSize {
                startDiscarding(oversize: true)
                i += k - 1
                continue
            }
            (out + length).copyMemory(from: base + (i - 1), byteCount: k)
            length += k
            blockRemaining -= k
            i += k - 1
            if hitZero { continue }  // the delimiter is handled on the next pass
        }
    }

    /// Convenience for tests and tools: decodes an array, returns the frames it completed.
    public func decode(_ bytes: [UInt8]) -> [DecodedFrame] {
        var frames: [DecodedFrame] = []
        bytes.withUnsafeBytes { decode($0) { frames.append($0) } }
        return frames
    }

    @inline(__always)
    private func append(_ byte: UInt8, _ out: UnsafeMutableRawPointer) {
        if length >= Wire.maxFrameSize {
            startDiscarding(oversize: true)
            return
        }
        out.storeBytes(of: byte, toByteOffset: length, as: UInt8.self)
        length += 1
    }

    private func startDiscarding(oversize: Bool) {
        if oversize { counters.oversize &+= 1 }
        discarding = true
        length = 0
    }

    private func endFrame(_ onFrame: (DecodedFrame) -> Void) {
        defer {
            length = 0
            blockRemaining = 0
            pendingZero = false
            discarding = false
            inFrame = false
        }
        guard inFrame, !discarding else { return }
        if blockRemaining != 0 {
            // The delimiter came inside a block: the frame was cut short.
            counters.malformed &+= 1
            return
        }
        guard length >= Wire.headerSize + Wire.crcSize else {
            counters.malformed &+= 1
            return
        }
        let frame = UnsafeRawBufferPointer(start: buffer.baseAddress, count: length)
        switch Self.parse(frame: frame) {
        case .failure(let error):
            switch error {
            case .tooShort: counters.malformed &+= 1
            case .crcMismatch: counters.crcErrors &+= 1
            case .unsupportedVersion: counters.badVersion &+= 1
            case .unsupportedFlags: counters.unsupportedFlags &+= 1
            }
        case .success(var decoded):
            trackSequence(decoded.header.sequence, message: decoded.message)
            counters.frames &+= 1
            switch decoded.message {
            case .unknown: counters.unknownTypes &+= 1
            case .malformed: counters.malformed &+= 1
            default: break
            }
            if keepsRawFrames { decoded.raw = Array(frame) }
            onFrame(decoded)
        }
    }

    /// Checks and reads one unstuffed frame (header, payload, CRC), as captures store them.
    public static func parse(frame: UnsafeRawBufferPointer) -> Result<DecodedFrame, FrameError> {
        guard frame.count >= Wire.headerSize + Wire.crcSize, frame.count <= Wire.maxFrameSize else {
            return .failure(.tooShort)
        }
        let bodyLength = frame.count - Wire.crcSize
        let sent = UInt32(littleEndian: frame.loadUnaligned(fromByteOffset: bodyLength, as: UInt32.self))
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: frame[0..<bodyLength])) == sent else {
            return .failure(.crcMismatch)
        }
        let header = FrameHeader(
            version: frame[0], flags: FrameFlags(rawValue: frame[1]),
            sequence: UInt16(littleEndian: frame.loadUnaligned(fromByteOffset: 2, as: UInt16.self)),
            type: frame[4],
            requestID: UInt16(littleEndian: frame.loadUnaligned(fromByteOffset: 6, as: UInt16.self)))
        guard header.version == Wire.version else { return .failure(.unsupportedVersion(header.version)) }
        guard header.flags.rawValue & FrameFlags.incompatibleMask == 0 else {
            return .failure(.unsupportedFlags(header.flags.rawValue))
        }
        let payload = UnsafeRawBufferPointer(rebasing: frame[Wire.headerSize..<bodyLength])
        return .success(DecodedFrame(header: header, message: MessageCodec.message(type: header.type, payload: payload)))
    }

    /// Reads one unstuffed frame held in an array.
    public static func parse(frame: [UInt8]) -> Result<DecodedFrame, FrameError> {
        frame.withUnsafeBytes { parse(frame: $0) }
    }

    /// §4: a frame ahead of the baseline moves it (counting the frames skipped); a frame
    /// behind it is counted out of order and leaves it alone, so one late frame
    /// (10, 11, 5, 12) costs no drops. An unannounced restart (BOOT lost) is found by the
    /// link layer from the boot count, which then calls `resetSequence()`.
    private func trackSequence(_ sequence: UInt16, message: Message) {
        // A pod that restarted begins again at 0 with a BOOT event: a new baseline, not a gap.
        if case .event(let e) = message, e.kind == .boot {
            counters.senderRestarts &+= 1
            lastSequence = sequence
            return
        }
        guard let last = lastSequence else {
            lastSequence = sequence
            return
        }
        let gap = sequence &- last &- 1
        if gap == 0 {
            lastSequence = sequence
        } else if gap < 0x8000 {
            counters.sequenceGaps &+= 1
            counters.droppedFrames &+= UInt64(gap)
            lastSequence = sequence
        } else {
            // Behind the last one: a repeated or reordered frame.
            counters.outOfOrder &+= 1
        }
    }
}

/// One valid frame: its header and its message.
public struct DecodedFrame: Sendable, Hashable {
    public var header: FrameHeader
    public var message: Message
    /// The unstuffed frame as received (header, payload, CRC), when the decoder keeps them.
    public var raw: [UInt8]?
    public init(header: FrameHeader, message: Message, raw: [UInt8]? = nil) {
        self.header = header
        self.message = message
        self.raw = raw
    }
}

/// Why an unstuffed frame was rejected.
public enum FrameError: Error, Sendable, Hashable {
    /// Shorter than a header and CRC, or longer than the maximum frame.
    case tooShort
    case crcMismatch
    case unsupportedVersion(UInt8)
    case unsupportedFlags(UInt8)
}

/// What a decoder has seen; every dropped byte or frame is counted under one reason.
public struct DecoderCounters: Sendable, Hashable {
    /// Bytes fed in.
    public var bytes: UInt64 = 0
    /// Valid frames delivered (including unknown and malformed types).
    public var frames: UInt64 = 0
    /// Frames whose CRC did not match: dropped.
    public var crcErrors: UInt64 = 0
    /// Frames longer than `Wire.maxFrameSize`: dropped up to the next delimiter.
    public var oversize: UInt64 = 0
    /// Frames too short for a header and CRC, or with broken stuffing, or known types whose
    /// payload could not be read (those are still delivered, as `.malformed`).
    public var malformed: UInt64 = 0
    /// Frames of a protocol version other than ours: dropped.
    public var badVersion: UInt64 = 0
    /// Frames with an incompatible flag we do not know: dropped.
    public var unsupportedFlags: UInt64 = 0
    /// Frames of a type we do not know: delivered as `.unknown`.
    public var unknownTypes: UInt64 = 0
    /// Places where the sender's sequence skipped ahead.
    public var sequenceGaps: UInt64 = 0
    /// Frames the sequence numbers say were sent but never arrived intact.
    public var droppedFrames: UInt64 = 0
    /// Frames whose sequence number went backwards without a BOOT event.
    public var outOfOrder: UInt64 = 0
    /// BOOT events seen (each restarts the sender's sequence).
    public var senderRestarts: UInt64 = 0

    public init() {}

    /// Adds `other`'s counts to these (the counters of several links or decoders in one).
    public mutating func add(_ other: DecoderCounters) {
        bytes &+= other.bytes; frames &+= other.frames; crcErrors &+= other.crcErrors
        oversize &+= other.oversize; malformed &+= other.malformed; badVersion &+= other.badVersion
        unsupportedFlags &+= other.unsupportedFlags; unknownTypes &+= other.unknownTypes
        sequenceGaps &+= other.sequenceGaps; droppedFrames &+= other.droppedFrames
        outOfOrder &+= other.outOfOrder; senderRestarts &+= other.senderRestarts
    }
}
