/// Places piezo samples in time from the pod's sample counter and the clock the hub set:
/// sample `i` is at `time + (i - sampleIndex) / sampleRate` Unix seconds. The analysing
/// machine's wall clock never enters, so a replay or a 100× virtual night is analysed
/// exactly as it would be live.
package struct SampleClock: Sendable, Hashable, Codable {
    /// A reference sample index (from the pod's counter).
    package var sampleIndex: Int64
    /// Unix seconds of the reference sample.
    package var time: Double
    /// Samples per second per channel.
    package var sampleRate: Double

    package init(sampleIndex: Int64 = 0, time: Double, sampleRate: Double = 500) {
        self.sampleIndex = sampleIndex
        self.time = time
        self.sampleRate = sampleRate
    }

    /// Unix seconds of sample `index`.
    @inline(__always)
    package func time(ofSample index: Int64) -> Double {
        time + Double(index - sampleIndex) / sampleRate
    }
}
