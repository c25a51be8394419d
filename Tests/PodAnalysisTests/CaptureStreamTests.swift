import Foundation
import PodAnalysis
import PodProtocol
import Testing

/// The streaming path (`Capture.RecordReader`, `CaptureStreamAnalyzer`) against the
/// whole-file path (`Capture.forEachRecord`, `CaptureAnalysis(capture:)`): the same
/// records, errors, results, whatever the chunk sizes.
@Suite struct CaptureStreamTests {
    /// Feeds `bytes` in chunks whose sizes cycle through `sizes`.
    static func streamed(_ bytes: [UInt8], sizes: [Int]) throws(CaptureAnalysisError) -> CaptureAnalysis {
        var analyzer = CaptureStreamAnalyzer()
        var offset = 0, k = 0
        while offset < bytes.count {
            let n = min(sizes[k % sizes.count], bytes.count - offset)
            try analyzer.feed(Array(bytes[offset..<(offset + n)]))
            offset += n
            k += 1
        }
        #expect(analyzer.bytesRead == bytes.count)
        return try analyzer.finish()
    }

    /// Records as (time, direction, frame) through the reader, chunked.
    static func records(_ bytes: [UInt8], chunk: Int) throws(Capture.ReadError) -> (records: [Capture.Record], truncated: Bool) {
        var reader = Capture.RecordReader()
        var out: [Capture.Record] = []
        var offset = 0
        while offset < bytes.count {
            let n = min(chunk, bytes.count - offset)
            try reader.feed(Array(bytes[offset..<(offset + n)])) { t, d, f in
                out.append(Capture.Record(receivedMicros: t, direction: d, frame: Array(f)))
            }
            offset += n
        }
        return (out, try reader.finish())
    }

    @Test func aTwoSidedNightStreamedFromAFileMatchesTheWholeFilePath() throws {
        // 20 minutes, both sides occupied, the pump running: about 10 MB of capture.
        let bytes = try makeCapture(inBedNight(seed: 41, duration: 20 * 60, pump: true), seconds: 20 * 60)
        let whole = try CaptureAnalysis(capture: bytes)
        #expect(whole.left.vitals.count == 1200 && whole.right.beats.count > 900)

        // Through a real file read in 1 MiB pieces, as `podbridge analyze --capture` does.
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("stream-\(UUID()).podcap")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let handle = try FileHandle(forReadingFrom: url)
        var analyzer = CaptureStreamAnalyzer()
        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
            try data.withUnsafeBytes { raw in try analyzer.feed(raw) }
        }
        try handle.close()
        #expect(try analyzer.finish() == whole)

        // Odd chunk sizes that split headers, frames and the magic.
        #expect(try Self.streamed(bytes, sizes: [4093, 5, 11, 1, 65_536, 12, 300]) == whole)
    }

    @Test func recordsTailsAndErrorsAreThoseOfTheWholeFileWalk() throws {
        var bytes = try makeCapture(inBedNight(seed: 42, duration: 3), seconds: 3)
        // A damaged frame stays a record (its CRC fails later, in the analysis).
        bytes[Capture.magic.count + 11 + 5] ^= 0xFF
        for cut in [0, 1, 10, 11, 12, 200] {
            let b = Array(bytes.dropLast(cut))
            let reference = try Capture.read(b)
            for chunk in [1, 2, 7, 11, 64, 1 << 20] {
                let r = try Self.records(b, chunk: chunk)
                #expect(r.records == reference.records, "cut \(cut) chunk \(chunk)")
                #expect(r.truncated == reference.truncatedTail, "cut \(cut) chunk \(chunk)")
            }
            #expect(try Self.streamed(b, sizes: [3, 1000]) == CaptureAnalysis(capture: b))
        }
        // A bad direction byte deep in the file: the same error and offset, however split.
        let records = try Capture.read(bytes).records
        let at = Capture.magic.count + records.prefix(30).reduce(0) { $0 + 11 + $1.frame.count }
        var badDirection = bytes
        badDirection[at + 8] = 9
        var badLength = bytes
        badLength[at + 9] = 0xFF
        badLength[at + 10] = 0xFF
        for (b, error) in [(badDirection, Capture.ReadError.badDirection(offset: at)), (badLength, .badLength(offset: at))] {
            #expect(throws: error) { try Capture.read(b) }
            for chunk in [1, 9, 4096] {
                #expect(throws: error) { try Self.records(b, chunk: chunk) }
                #expect(throws: CaptureAnalysisError.unreadable(error)) { try Self.streamed(b, sizes: [chunk]) }
            }
        }
        // Not a capture: wrong magic (found in the first chunk) or a file shorter than it.
        for b in [Array("time,heart_rate\n".utf8), [], Array(Capture.magic.prefix(5))] {
            #expect(throws: CaptureAnalysisError.unreadable(.notACapture)) { try Self.streamed(b, sizes: [2]) }
        }
    }

    @Test func aFailedReaderStaysFailed() throws {
        var reader = Capture.RecordReader()
        #expect(throws: Capture.ReadError.notACapture) { try reader.feed([0x50, 0x4F, 0x58]) { _, _, _ in } }
        #expect(throws: Capture.ReadError.notACapture) { try reader.feed(Capture.magic) { _, _, _ in } }
        #expect(throws: Capture.ReadError.notACapture) { try reader.finish() }
    }

    @Test func anchorsThatSpreadTheDataOverMonthsAreAClearError() throws {
        // A pod reboot whose new SET_CLOCK answer is 40 days later: staging would lay an
        // epoch grid over 40 days (the capture fuzzer's kind of input).
        var b = CaptureBuilder()
        try b.appendClockExchange(ClockAnchor(tick: 0, unixMillis: anchorMillis, utcOffsetMinutes: 0), requestID: 1,
                                  receivedMicros: 1)
        var first = NightStream(inBedNight(seed: 43, duration: 12, right: false), firstTick: 1)
        for m in first.next(seconds: 12) { try b.append(m, receivedMicros: 2) }
        try b.append(.event(PodEvent(tick: 0, kind: .boot, side: nil, argument: 0)), receivedMicros: 3)
        try b.appendClockExchange(ClockAnchor(tick: 0, unixMillis: anchorMillis + 40 * 86_400_000, utcOffsetMinutes: 0),
                                  requestID: 2, receivedMicros: 4)
        var second = NightStream(inBedNight(seed: 44, duration: 12, right: false), firstTick: 1)
        for m in second.next(seconds: 12) { try b.append(m, receivedMicros: 5) }
        do {
            _ = try CaptureAnalysis(capture: b.bytes)
            Issue.record("40 days of anchors must be refused")
        } catch {
            guard case .spanTooLong(let days) = error else { Issue.record("unexpected \(error)"); return }
            #expect((39...41).contains(days))
            #expect(error.message(file: "a.podcap").hasPrefix("a.podcap: the capture's clock anchors place its data over 40 days"))
        }
        #expect(throws: CaptureAnalysisError.self) { try Self.streamed(b.bytes, sizes: [1000]) }
    }
}
