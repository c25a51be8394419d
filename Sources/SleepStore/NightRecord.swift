import SleepDomain

/// Plain records the store takes and gives back. They are deliberately independent of the
/// analyzer's types so the store (and its export/upload formats) stays stable when the
/// analysis changes; the hub maps analyzer output onto these.

/// One 30-second epoch of one side: its stage, the stage probabilities and the features.
/// Features are optional because the analyzer rejects impossible values instead of
/// reporting them; a missing feature is stored as NULL, never as a made-up number.
public struct EpochRecord: Sendable, Hashable, Codable {
    /// Epoch length in seconds; every epoch spans `[start, start + 30)`.
    public static let duration: Int64 = 30

    /// Unix seconds (UTC) at which the epoch starts.
    public var start: Int64
    public var stage: SleepStage
    public var probabilities: StageProbabilities?
    public var heartRate: Double?
    public var hrvRMSSD: Double?
    public var breathingRate: Double?
    public var movement: Double?

    public init(
        start: Int64, stage: SleepStage, probabilities: StageProbabilities? = nil,
        heartRate: Double? = nil, hrvRMSSD: Double? = nil, breathingRate: Double? = nil,
        movement: Double? = nil
    ) {
        self.start = start
        self.stage = stage
        self.probabilities = probabilities
        self.heartRate = heartRate
        self.hrvRMSSD = hrvRMSSD
        self.breathingRate = breathingRate
        self.movement = movement
    }

    public var end: Int64 { start + Self.duration }
}

/// Nightly metrics of one session as the analyzer computed them.
/// Minutes are minutes; `efficiency` and the `*Percent` shares are percentages (0–100) of
/// time in bed; `score` is the analyzer's documented 0–100 score.
public struct NightMetrics: Sendable, Hashable, Codable {
    public var timeInBedMinutes: Double
    public var totalSleepMinutes: Double
    public var efficiency: Double
    public var onsetLatencyMinutes: Double
    public var wasoMinutes: Double
    public var awakenings: Int
    public var awakeMinutes: Double
    public var coreMinutes: Double
    public var deepMinutes: Double
    public var remMinutes: Double
    public var awakePercent: Double
    public var corePercent: Double
    public var deepPercent: Double
    public var remPercent: Double
    public var meanHeartRate: Double?
    public var meanHRV: Double?
    public var meanBreathingRate: Double?
    public var score: Int

    public init(
        timeInBedMinutes: Double, totalSleepMinutes: Double, efficiency: Double,
        onsetLatencyMinutes: Double, wasoMinutes: Double, awakenings: Int,
        awakeMinutes: Double, coreMinutes: Double, deepMinutes: Double, remMinutes: Double,
        awakePercent: Double, corePercent: Double, deepPercent: Double, remPercent: Double,
        meanHeartRate: Double?, meanHRV: Double?, meanBreathingRate: Double?, score: Int
    ) {
        self.timeInBedMinutes = timeInBedMinutes
        self.totalSleepMinutes = totalSleepMinutes
        self.efficiency = efficiency
        self.onsetLatencyMinutes = onsetLatencyMinutes
        self.wasoMinutes = wasoMinutes
        self.awakenings = awakenings
        self.awakeMinutes = awakeMinutes
        self.coreMinutes = coreMinutes
        self.deepMinutes = deepMinutes
        self.remMinutes = remMinutes
        self.awakePercent = awakePercent
        self.corePercent = corePercent
        self.deepPercent = deepPercent
        self.remPercent = remPercent
        self.meanHeartRate = meanHeartRate
        self.meanHRV = meanHRV
        self.meanBreathingRate = meanBreathingRate
        self.score = score
    }
}

/// One analysed in-bed session of one side: what the hub hands to `SleepStore.save`.
public struct NightRecord: Sendable, Hashable {
    public var podSerial: String
    public var side: BedSide
    /// Unix seconds (UTC) of the session start and end; end > start.
    public var start: Int64
    public var end: Int64
    /// Epochs in time order, unique starts, stages other than `in_bed`.
    public var epochs: [EpochRecord]
    public var metrics: NightMetrics
    /// A preliminary session (analysed while the night is still going on) is stored and
    /// exported but never uploaded: the backend cannot update a session once posted.
    public var isPreliminary: Bool

    public init(
        podSerial: String, side: BedSide, start: Int64, end: Int64, epochs: [EpochRecord],
        metrics: NightMetrics, isPreliminary: Bool = false
    ) {
        self.podSerial = podSerial
        self.side = side
        self.start = start
        self.end = end
        self.epochs = epochs
        self.metrics = metrics
        self.isPreliminary = isPreliminary
    }

    /// The stable source id (idempotency key) of this session: pod serial, side and
    /// session start. Re-analysing the same night yields the same id.
    public var sourceID: String { SourceID.make(podSerial: podSerial, side: side, start: start) }
}

/// Builds the stable source id `podbridge:<serial>:<side>:<start unix seconds>`.
public enum SourceID {
    public static func make(podSerial: String, side: BedSide, start: Int64) -> String {
        "podbridge:\(podSerial):\(side.rawValue):\(start)"
    }
}
