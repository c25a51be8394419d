/// What one push into the front end produced: the seconds now complete, and the beats
/// that fell in them (gated like the heart rate: only while present and not moving).
package struct FrontEndOutput: Sendable, Hashable {
    package var seconds: [SecondVitals]
    /// J-peak times in Unix seconds (a constant delay after the heart's R-wave).
    package var beats: [Double]

    package init(seconds: [SecondVitals] = [], beats: [Double] = []) {
        self.seconds = seconds
        self.beats = beats
    }

    /// Add the seconds and beats of a later output.
    package mutating func append(_ other: FrontEndOutput) {
        seconds += other.seconds
        beats += other.beats
    }
}

/// Counts of what the front end had to skip or repair, for diagnostics.
package struct FrontEndCounters: Sendable, Hashable {
    /// 500 Hz frames (one sample per channel) processed.
    package var frames: Int = 0
    /// Gaps in the sample counter bridged by holding the last value.
    package var bridgedGaps: Int = 0
    /// Gaps too long to bridge (filters restarted).
    package var resets: Int = 0
    /// Samples that repeated an index already processed (dropped).
    package var overlappingSamples: Int = 0
    /// Trailing samples that did not make a whole frame (dropped).
    package var partialFrames: Int = 0
    /// Capacitance readings that arrived for seconds already emitted, or with no channels.
    package var rejectedCapacitance: Int = 0

    package init() {}
}
