/// CRC-32C (Castagnoli), the checksum on every frame.
///
/// Parameters (Rocksoft model): width 32, poly 0x1EDC6F41 (reflected 0x82F63B78),
/// init 0xFFFFFFFF, refin true, refout true, xorout 0xFFFFFFFF, check 0xE3069283 over
/// the ASCII bytes "123456789". CRC-32C was chosen over CRC-16 because it detects all
/// burst errors up to 32 bits in frames of our size (≤ 1 KiB) and microcontrollers and
/// x86 alike compute it in hardware. This implementation is slicing-by-8 so that the
/// checksum costs the hub far less than the pod's few KB/s.
public enum CRC32C {
    /// The reflected generator polynomial.
    public static let polynomial: UInt32 = 0x82F6_3B78

    /// The CRC of `bytes`.
    @inlinable
    public static func checksum<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        if let result = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(bytes).withUnsafeBytes { checksum($0) }
    }

    /// The CRC of the bytes in `buffer`.
    public static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        update(0xFFFF_FFFF, buffer) ^ 0xFFFF_FFFF
    }

    /// Continues a running (pre-inversion) CRC over more bytes.
    static func update(_ crc: UInt32, _ buffer: UnsafeRawBufferPointer) -> UInt32 {
        var crc = crc
        guard var p = buffer.baseAddress else { return crc }
        var n = buffer.count
        return table.withUnsafeBufferPointer { t in
            while n >= 8 {
                let lo = p.loadUnaligned(as: UInt32.self).littleEndian ^ crc
                let hi = p.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
                crc = t[7 * 256 + Int(lo & 0xFF)]
                    ^ t[6 * 256 + Int((lo >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((lo >> 16) & 0xFF)]
                    ^ t[4 * 256 + Int(lo >> 24)]
                    ^ t[3 * 256 + Int(hi & 0xFF)]
                    ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
                    ^ t[1 * 256 + Int((hi >> 16) & 0xFF)]
                    ^ t[Int(hi >> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                crc = t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
                p += 1
                n -= 1
            }
            return crc
        }
    }

    /// Eight 256-entry tables: table k gives the CRC of a byte followed by k zero bytes.
    private static let table: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ polynomial : c >> 1 }
            t[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 {
                let prev = t[(k - 1) * 256 + i]
                t[k * 256 + i] = t[Int(prev & 0xFF)] ^ (prev >> 8)
            }
        }
        return t
    }()
}
