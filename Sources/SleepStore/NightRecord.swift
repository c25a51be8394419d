import SleepDomain

/// Plain records the store takes and gives back. They are deliberately independent of the
/// analyzer's types so the store (and its export/upload formats) stays stable when the
/// analysis changes; the hub maps analyzer output onto these.

/// One 30-second epoch of one side: its stage, the stage probabilities and the features.
/// Features are optional because the analyzer rejects impossible values instead of
/// reporting them; a missing feature is stored as NULL, never as a made-up number.
package struct EpochRecord: Sendable, Hashable, Codable {
    /// Epoch length in seconds; every epoch spans `[start, start + 30)`.
    package static let duration: Int64 = 30

    /// Unix seconds (UTC) at which the epoch starts.
    package var start: Int64
    package var stage: SleepStage
    package var probabilities: StageProbabilities?
    package var heartRate: Double?
    package var hrvRMSSD: Double?
    package var breathingRate: Double?
    package var movement: Double?

    package init(
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

    package var end: Int64 { start + Self.duration }
}

/// Nightly metrics of one session as the analyzer computed them.
/// Minutes are minutes; `efficiency` and the `*Percent` shares are percentages (0–100) of
/// time in bed; `score` is the analyzer's documented 0–100 score.
package struct NightMetrics: Sendable, Hashable, Codable {
    package var timeInBedMinutes: Double
    package var totalSleepMinutes: Double
    package var efficiency: Double
    package var onsetLatencyMinutes: Double
    package var wasoMinutes: Double
    package var awakenings: Int
    package var awakeMinutes: Double
    package var coreMinutes: Double
    package var deepMinutes: Double
    package var remMinutes: Double
    package var awakePercent: Double
    package var corePercent: Double
    package var deepPercent: Double
    package var remPercent: Double
    package var meanHeartRate: Double?
    package var meanHRV: Double?
    package var meanBreathingRate: Double?
    package var score: Int

    package init(
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

/// One analysed in-bed session of one side: what the hub hands to `NightStore.save`.
package struct NightRecord: Sendable, Hashable {
    package var podSerial: String
    package var side: BedSide
    /// Unix seconds (UTC) of the session start and end; end > start.
    package var start: Int64
    package var end: Int64
    /// Epochs in time order, unique starts, stages other than `in_bed`.
    package var epochs: [EpochRecord]
    package var metrics: NightMetrics
    /// False for a preliminary session (analysed while the night is still going on): it is
    /// stored and exported but never uploaded, as the backend cannot update a session once posted.
    package var isFinal: Bool

    package init(
        podSerial: String, side: BedSide, start: Int64, end: Int64, epochs: [EpochRecord],
        metrics: NightMetrics, isFinal: Bool = true
    ) {
        self.podSerial = podSerial
        self.side = side
        self.start = start
        self.end = end
        self.epochs = epochs
        self.metrics = metrics
        self.isFinal = isFinal
    }

    /// The stable source id (idempotency key) of this session: pod serial, side and
    /// session start. Re-analysing the same night yields the same id.
    package var sourceID: String { SourceID.make(podSerial: podSerial, side: side, start: start) }
}

/// Builds the stable source id `podbridge:<serial>:<side>:<start unix seconds>`.
package enum SourceID {
    package static func make(podSerial: String, side: BedSide, start: Int64) -> String {
        "podbridge:\(podSerial):\(side.rawValue):\(start)"
    }
}
