import SleepDomain

/// 30-second epochs: the unit every stage, feature and metric is counted in.
///
/// Epochs are aligned to wall-clock half-minutes (their start is a Unix time that is a
/// multiple of 30 s) so that epochs from different sources (pod, ECG, a replay) line up
/// and an exported hypnogram starts on a round half-minute.

/// Length of one epoch in seconds.
public let epochLength: Double = 30

/// Start (Unix seconds) of the epoch that contains `time`.
public func epochStart(containing time: Double) -> Double {
    (time / epochLength).rounded(.down) * epochLength
}

/// What was measured in one epoch. Every value is optional: a value that could not be
/// measured honestly (too few clean beats, no breathing reading) is `nil`, never a guess.
public struct EpochFeatures: Sendable, Codable, Hashable {
    /// Mean heart rate (bpm) from clean beat-to-beat intervals or per-second readings.
    public var heartRate: Double?
    /// Heart rate relative to the night: robust z-score ((x − median) / IQR·0.7413).
    public var heartRateZ: Double?
    /// Heart rate relative to the night: percentile rank 0…1.
    public var heartRatePercentile: Double?
    /// RMSSD of clean intervals over the 2.5-minute window centred on the epoch (ms).
    public var rmssd: Double?
    /// SDNN of clean intervals over the 2.5-minute window (ms).
    public var sdnn: Double?
    /// Share of successive interval differences over 50 ms in the 2.5-minute window (0…1).
    public var pnn50: Double?
    /// Standard deviation of instantaneous heart rate over the 4.5-minute window (bpm).
    public var heartRateSD: Double?
    /// Beats (interval ends) in the epoch and how many were rejected as ectopic/artefact.
    public var beats: Int
    public var rejectedBeats: Int
    /// Mean breathing rate (per minute) and its regularity as the coefficient of variation
    /// of per-second rates over the 2.5-minute window (lower is more regular).
    public var breathingRate: Double?
    public var breathingVariability: Double?
    /// Mean movement index (front-end units).
    public var movement: Double?
    /// Whether the sleeper was in bed in this epoch.
    public var present: Bool
    /// Signal quality 0…1: share of the epoch covered by clean beat intervals (beats input)
    /// or the mean front-end quality (vitals input).
    public var quality: Double
    /// Minutes since sleep onset (nil before onset), filled in after staging.
    public var minutesSinceSleepOnset: Double?
    /// Local clock time of the epoch start in hours 0…24 (in the sleeper's time zone).
    public var clockHour: Double

    public init(heartRate: Double? = nil, heartRateZ: Double? = nil, heartRatePercentile: Double? = nil,
                rmssd: Double? = nil, sdnn: Double? = nil, pnn50: Double? = nil, heartRateSD: Double? = nil,
                beats: Int = 0, rejectedBeats: Int = 0, breathingRate: Double? = nil,
                breathingVariability: Double? = nil, movement: Double? = nil, present: Bool = true,
                quality: Double = 0, minutesSinceSleepOnset: Double? = nil, clockHour: Double = 0) {
        self.heartRate = heartRate; self.heartRateZ = heartRateZ
        self.heartRatePercentile = heartRatePercentile
        self.rmssd = rmssd; self.sdnn = sdnn; self.pnn50 = pnn50; self.heartRateSD = heartRateSD
        self.beats = beats; self.rejectedBeats = rejectedBeats
        self.breathingRate = breathingRate; self.breathingVariability = breathingVariability
        self.movement = movement; self.present = present; self.quality = quality
        self.minutesSinceSleepOnset = minutesSinceSleepOnset; self.clockHour = clockHour
    }
}

/// One staged 30-second epoch.
public struct Epoch: Sendable, Codable, Hashable {
    /// Unix seconds, a multiple of 30.
    public var start: Double
    public var end: Double { start + epochLength }
    public var stage: SleepStage
    public var probabilities: StageProbabilities
    public var features: EpochFeatures

    public init(start: Double, stage: SleepStage, probabilities: StageProbabilities, features: EpochFeatures) {
        self.start = start; self.stage = stage; self.probabilities = probabilities; self.features = features
    }
}
