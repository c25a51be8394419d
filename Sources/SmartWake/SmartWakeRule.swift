/// The thresholds of the smart-wake rule. The defaults were chosen on virtual-pod nights with
/// the previous staging model's forward-filtered stages (seeds 700–723); with the current
/// model they never wake early, so they are due to be re-chosen (docs/smart-wake.md).
public struct SmartWakeRule: Sendable, Hashable, Codable {
    /// Light sleep counts when P(core) reaches this …
    public var lightProbability: Double = 0.7
    /// … for this many consecutive epochs (one or two stray epochs are not a stage).
    public var lightEpochs: Int = 3
    /// Awake counts when P(awake) reaches this and the epoch's movement reaches `movement`.
    public var awakeProbability: Double = 0.5
    public var movement: Double = 1.0
    /// An arousal: P(core) + P(awake) at least this, movement, and the heart rate this many bpm
    /// above the night's baseline (the median heart rate in bed before the window opened).
    public var arousalProbability: Double = 0.6
    public var heartRateRise: Double = 6
    /// Never wake while P(deep) is at or above this, whatever else holds.
    public var deepVeto: Double = 0.25
    /// Nor while P(REM) is: REM is not light sleep, and the live stager most often mistakes
    /// REM with a twitch for awake with movement.
    public var remVeto: Double = 0.15
    /// Baseline heart rates needed before the rise can be judged.
    public var minimumBaselineEpochs: Int = 20

    public init() {}
}
