/// Little-endian field writing and bounds-checked reading; every payload goes through these.

struct ByteWriter {
    var bytes: [UInt8]

    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func i16(_ v: Int16) { u16(UInt16(bitPattern: v)) }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func i64(_ v: Int64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func raw(_ v: [UInt8]) { bytes.append(contentsOf: v) }

    /// Appends Int32 samples little-endian in one copy on little-endian hosts.
    mutating func samples(_ v: [Int32]) {
        #if _endian(little)
        v.withUnsafeBytes { bytes.append(contentsOf: $0) }
        #else
        for s in v { u32(UInt32(bitPattern: s)) }
        #endif
    }
}

/// Reads fields from a payload; running past the end throws `.truncated` and never traps.
struct ByteReader {
    let base: UnsafeRawBufferPointer
    var offset = 0

    init(_ base: UnsafeRawBufferPointer) { self.base = base }

    var remaining: Int { base.count - offset }

    mutating func need(_ n: Int) throws(PayloadError) {
        guard n >= 0, remaining >= n else { throw .truncated(needed: offset + n, got: base.count) }
    }

    mutating func u8() throws(PayloadError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return base[offset]
    }

    mutating func u16() throws(PayloadError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    mutating func i16() throws(PayloadError) -> Int16 { Int16(bitPattern: try u16()) }

    mutating func u32() throws(PayloadError) -> UInt32 {
        try need(4)
        defer { offset += 4 }
        return UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func u64() throws(PayloadError) -> UInt64 {
        try need(8)
        defer { offset += 8 }
        return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func i64() throws(PayloadError) -> Int64 { Int64(bitPattern: try u64()) }

    mutating func bytes(_ n: Int) throws(PayloadError) -> [UInt8] {
        try need(n)
        defer { offset += n }
        return Array(UnsafeRawBufferPointer(rebasing: base[offset..<(offset + n)]))
    }

    /// All bytes left (fields a newer sender appended are ignored by callers that stop early).
    mutating func rest() -> [UInt8] {
        defer { offset = base.count }
        return Array(UnsafeRawBufferPointer(rebasing: base[offset...]))
    }

    /// `count` little-endian Int32s in one copy.
    mutating func samples(_ count: Int) throws(PayloadError) -> [Int32] {
        let n = count &* 4
        try need(n)
        let start = offset
        offset += n
        #if _endian(little)
        return [Int32](unsafeUninitializedCapacity: count) { buf, initialized in
            UnsafeMutableRawBufferPointer(buf).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: base[start..<(start + n)]))
            initialized = count
        }
        #else
        return (0..<count).map { Int32(bitPattern: UInt32(littleEndian:
            base.loadUnaligned(fromByteOffset: start + 4 * $0, as: UInt32.self))) }
        #endif
    }
}
