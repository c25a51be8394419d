/// Consistent Overhead Byte Stuffing: the framing that makes the link self-synchronising.
///
/// After stuffing, a frame contains no 0x00 byte, so 0x00 can delimit frames: a receiver
/// that joins mid-stream, or sees garbage, loses at most the frame it is in and is back in
/// step at the next 0x00. The overhead is one byte per 254 bytes of frame, plus one.
/// (Cheshire & Baker, "Consistent Overhead Byte Stuffing", IEEE/ACM ToN 1999.)
public enum COBS {
    /// The largest stuffed size of a frame of `length` bytes (without the delimiter).
    @inlinable
    public static func maxEncodedLength(_ length: Int) -> Int {
        length + length / 254 + 1
    }

    /// Stuffs `frame` and appends it to `output`, followed by the 0x00 delimiter.
    public static func encode(_ frame: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) {
        // Grow geometrically, as append does: reserving exactly what one frame needs would
        // reallocate and copy the whole buffer for every frame added to a long one (a pod's
        // transmit queue while its hub lags: quadratic, and the pod stops keeping time).
        let needed = output.count + maxEncodedLength(frame.count) + 1
        if output.capacity < needed { output.reserveCapacity(max(needed, 2 * output.capacity)) }
        var codeIndex = output.count
        output.append(0)  // placeholder for the first code byte
        var code: UInt8 = 1
        for byte in frame {
            if byte == 0 {
                output[codeIndex] = code
                codeIndex = output.count
                output.append(0)
                code = 1
            } else {
                output.append(byte)
                code += 1
                if code == 0xFF {
                    output[codeIndex] = code
                    codeIndex = output.count
                    output.append(0)
                    code = 1
                }
            }
        }
        output[codeIndex] = code
        output.append(0)
    }

    /// Stuffs `frame` and returns it with its 0x00 delimiter.
    public static func encode(_ frame: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        frame.withUnsafeBytes { encode($0, appendingTo: &out) }
        return out
    }

    /// Unstuffs one frame given without its delimiter; nil if the bytes are not valid COBS.
    public static func decode(_ encoded: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(encoded.count)
        var i = 0
        while i < encoded.count {
            let code = Int(encoded[i])
            let end = i + code
            guard code != 0, end <= encoded.count else { return nil }
            for byte in encoded[(i + 1)..<end] {
                guard byte != 0 else { return nil }
                out.append(byte)
            }
            i = end
            if code < 0xFF && i < encoded.count { out.append(0) }
        }
        return out
    }
}
