import PodProtocol
import SleepAnalysis

/// A capture analysed as it is read: feed the file in chunks of any size, then `finish()`
/// gives the same `CaptureAnalysis` as reading the whole file would. Memory does not grow
/// with the night: it holds at most one record split across chunks, the router's short
/// hold and the front ends' windows, and the per-second vitals and beats (a few MB for
/// eight hours), never the capture (about 250 MB for an 8-hour two-sided night).
/// Pure: the caller reads the file.
public struct CaptureStreamAnalyzer: Sendable {
    private var reader = Capture.RecordReader()
    private var sink: CaptureRecordSink

    public init(frontEnd: FrontEndConfig = FrontEndConfig(), sampleRate: Int = Wire.tickRate) {
        sink = CaptureRecordSink(frontEnd: frontEnd, sampleRate: sampleRate)
    }

    /// Bytes fed so far.
    public var bytesRead: Int { reader.bytesRead }

    /// The next piece of the file. Throws as soon as the bytes cannot be a capture (the
    /// magic is wrong, a record header is impossible); the records before were analysed.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer) throws(CaptureAnalysisError) {
        // The reader is taken out while it calls back into the sink (both live in self).
        var reader = Capture.RecordReader()
        swap(&reader, &self.reader)
        defer { swap(&reader, &self.reader) }
        do {
            try reader.feed(chunk) { _, direction, frame in sink.take(direction, frame) }
        } catch {
            throw .unreadable(error)
        }
    }

    public mutating func feed(_ chunk: [UInt8]) throws(CaptureAnalysisError) {
        try chunk.withUnsafeBytes { raw in
            Result { () throws(CaptureAnalysisError) in try feed(raw) }
        }.get()
    }

    /// The end of the file: the analysis, or why there is none (not a capture, no clock
    /// anchor).
    public consuming func finish() throws(CaptureAnalysisError) -> CaptureAnalysis {
        let truncated: Bool
        do {
            truncated = try reader.finish()
        } catch {
            throw .unreadable(error)
        }
        return try sink.result(truncatedTail: truncated)
    }
}
