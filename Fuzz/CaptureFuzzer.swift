// libFuzzer target for capture files (built by `make fuzz` straight from Sources/PodProtocol,
// Sources/SleepAnalysis and Sources/PodAnalysis): what `podbridge analyze --capture` and
// `podbridge inspect` read.
//
// Oracles beyond "does not crash": the chunked reader gives exactly the records, tail and
// error of the whole-file walk, and the streaming analysis exactly the whole-file one;
// what it gives is staged as the command stages it.
import Foundation
import PodAnalysis
import PodProtocol
import SleepAnalysis

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCapture(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = UnsafeRawBufferPointer(start: data, count: size)
    // The first byte picks the chunk size; the rest follows the magic, so the fuzzer
    // spends its time in the records (one input in 64 is taken as the whole file).
    let chunk = Int(input[0]) + 1
    let body = Array(input[1...])
    let bytes = input[0] % 64 == 0 ? body : Capture.magic + body

    let whole = Result { () throws(Capture.ReadError) in try Capture.read(bytes) }
    var reader = Capture.RecordReader()
    var records: [Capture.Record] = []
    let streamed = Result { () throws(Capture.ReadError) in
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            try reader.feed(Array(bytes[offset..<end])) { t, d, f in
                records.append(Capture.Record(receivedMicros: t, direction: d, frame: Array(f)))
            }
            offset = end
        }
        return (records, try reader.finish())
    }
    switch (whole, streamed) {
    case (.success(let w), .success(let s)):
        precondition(w.records == s.0 && w.truncatedTail == s.1, "chunked reader differs from the whole-file walk")
    case (.failure(let w), .failure(let s)):
        precondition(w == s, "chunked reader fails differently: \(s) vs \(w)")
    default:
        precondition(false, "chunked reader and whole-file walk disagree: \(whole) vs \(streamed)")
    }

    let analysed = Result { () throws(CaptureAnalysisError) in try CaptureAnalysis(capture: bytes) }
    let stream = Result { () throws(CaptureAnalysisError) in
        var analyzer = CaptureStreamAnalyzer()
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            try analyzer.feed(Array(bytes[offset..<end]))
            offset = end
        }
        return try analyzer.finish()
    }
    switch (analysed, stream) {
    case (.success(let a), .success(let b)):
        precondition(a == b, "streaming analysis differs from the whole-file analysis")
        _ = a.warnings(file: "fuzz.podcap")
        let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)
        for side in [Side.left, .right] {
            _ = analyzer.analyze(beats: a[side].beats, vitals: a[side].vitals)
        }
    case (.failure(let a), .failure(let b)):
        precondition(a == b, "streaming analysis fails differently: \(b) vs \(a)")
    default:
        precondition(false, "streaming and whole-file analysis disagree")
    }
    return 0
}
