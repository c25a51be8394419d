// libFuzzer target for the frame decoder (built by `make fuzz` with
// `swiftc -sanitize=fuzzer,address` straight from Sources/PodProtocol).
//
// Oracles beyond "does not crash": every byte is counted, and every frame the decoder
// accepts re-encodes to a frame that decodes to the same message.
import PodProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let decoder = FrameDecoder()
    // The first byte picks the chunk size, so splits are explored too.
    let chunk = size > 0 ? Int(bytes[0]) + 1 : 1
    var offset = 0
    var frames: [DecodedFrame] = []
    while offset < size {
        let end = min(offset + chunk, size)
        decoder.decode(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) { frames.append($0) }
        offset = end
    }
    precondition(decoder.counters.bytes == UInt64(size), "bytes not counted")
    for frame in frames {
        switch frame.message {
        case .unknown, .malformed:
            continue
        default:
            var encoder = FrameEncoder(firstSequence: frame.header.sequence)
            guard let wire = try? encoder.encode(frame.message, requestID: frame.header.requestID,
                                                 flags: frame.header.flags) else { continue }
            let again = FrameDecoder().decode(wire)
            precondition(again.count == 1 && again[0].message == frame.message, "round trip changed \(frame.message)")
        }
    }
    // Captures and single unstuffed frames take arbitrary bytes too.
    let array = Array(bytes)
    _ = try? Capture.read(Capture.magic + array)
    _ = FrameDecoder.parse(frame: array)
    return 0
}
