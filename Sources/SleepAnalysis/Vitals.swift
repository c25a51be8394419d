import SleepDomain

/// The values that pass between the signal front end and the stager.
///
/// The front end (raw piezo and capacitance in, per-second vitals and beat times out)
/// and the stager (beats and vitals in, epochs and stages out) meet only here, so
/// research data that starts at beat times (ECG R-peaks) enters the same stager as
/// the pod's own signals.

/// Why the front end gave no number for a vital sign in a second.
public enum NoReadingReason: String, Sendable, Codable, Hashable {
    /// Nobody in this side of the bed.
    case absent
    /// The body moved: the piezo signal is dominated by movement, not beats or breath.
    case movement
    /// Too little signal, or too much noise, to trust an estimate.
    case lowQuality
    /// An estimate existed but fell outside physiological limits
    /// (heart rate 30–200 bpm, breathing 4–40 per minute), so it is not reported.
    case implausible
    /// Not enough history yet (the first seconds after someone lies down).
    case warmingUp
}

/// A vital sign that is either a number or a reason there is none.
public enum Reading: Sendable, Hashable {
    case value(Double)
    case none(NoReadingReason)

    public var value: Double? {
        if case .value(let v) = self { return v }
        return nil
    }
}

/// One second of one side of the bed, as the front end saw it.
public struct SecondVitals: Sendable, Hashable {
    /// Unix seconds of the start of this second (from the pod's sample counter and the
    /// clock the hub set, never from the wall clock of the analysing machine).
    public var time: Double
    /// Beats per minute, 30–200, or why there is none.
    public var heartRate: Reading
    /// Breaths per minute, 4–40, or why there is none.
    public var breathingRate: Reading
    /// Movement index: 0 still, larger is more movement (dimensionless, roughly 0–10).
    public var movement: Double
    /// Whether someone is in this side of the bed (with hysteresis).
    public var present: Bool
    /// Signal quality 0 (useless) … 1 (clean).
    public var quality: Double

    public init(time: Double, heartRate: Reading, breathingRate: Reading,
                movement: Double, present: Bool, quality: Double) {
        self.time = time
        self.heartRate = heartRate
        self.breathingRate = breathingRate
        self.movement = movement
        self.present = present
        self.quality = quality
    }
}
