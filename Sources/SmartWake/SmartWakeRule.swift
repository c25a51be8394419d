/// The thresholds of the smart-wake rule. The defaults were chosen on virtual-pod nights with
/// the analyzer's forward-filtered stages (`make bench --only wake`, docs/smart-wake.md).
public struct SmartWakeRule: Sendable, Hashable, Codable {
    /// Light sleep counts when P(core) reaches this …
    public var lightProbability: Double = 0.6
    /// … for this many consecutive epochs (one stray epoch is not a stage).
    public var lightEpochs: Int = 2
    /// Awake counts when P(awake) reaches this and the epoch's movement reaches `movement`.
    public var awakeProbability: Double = 0.5
    public var movement: Double = 0.3
    /// An arousal: P(core) + P(awake) at least this with the heart rate this many bpm above
    /// the night's baseline (the median heart rate in bed before the window opened).
    public var arousalProbability: Double = 0.6
    public var heartRateRise: Double = 4
    /// Never wake while P(deep) is at or above this, whatever else holds.
    public var deepVeto: Double = 0.25
    /// Baseline heart rates needed before the rise can be judged.
    public var minimumBaselineEpochs: Int = 20

    public init() {}
}
