/// What one push into the front end produced: the seconds now complete, and the beats
/// that fell in them (gated like the heart rate: only while present and not moving).
public struct FrontEndOutput: Sendable, Hashable {
    public var seconds: [SecondVitals]
    /// J-peak times in Unix seconds (a constant delay after the heart's R-wave).
    public var beats: [Double]

    public init(seconds: [SecondVitals] = [], beats: [Double] = []) {
        self.seconds = seconds
        self.beats = beats
    }

    /// Add the seconds and beats of a later output.
    public mutating func append(_ other: FrontEndOutput) {
        seconds += other.seconds
        beats += other.beats
    }
}

/// Counts of what the front end had to skip or repair, for diagnostics.
public struct FrontEndCounters: Sendable, Hashable {
    /// 500 Hz frames (one sample per channel) processed.
    public var frames: Int = 0
    /// Gaps in the sample counter bridged by holding the last value.
    public var bridgedGaps: Int = 0
    /// Gaps too long to bridge (filters restarted).
    public var resets: Int = 0
    /// Samples that repeated an index already processed (dropped).
    public var overlappingSamples: Int = 0
    /// Trailing samples that did not make a whole frame (dropped).
    public var partialFrames: Int = 0
    /// Capacitance readings that arrived for seconds already emitted, or with no channels.
    public var rejectedCapacitance: Int = 0

    public init() {}
}
