/// The thresholds of the smart-wake rule, chosen on virtual-pod nights (seeds 700–723) with
/// the current staging model's forward-filtered stages and measured on held-out seeds
/// 900–923 (docs/smart-wake.md). That stager puts P(REM) ≈ 0.9 on nearly every late-night
/// epoch and P(awake) near 0.005, so the thresholds are low: they pick out the epochs where
/// light sleep or waking shows at all (P(core) a little up for two minutes, P(awake) a few
/// times its usual level with movement, or a heart-rate rise with movement), and the REM veto
/// only holds back epochs the stager is all but sure are REM.
package struct SmartWakeRule: Sendable, Hashable, Codable {
    /// Light sleep counts when P(core) reaches this …
    package var lightProbability: Double = 0.2
    /// … for this many consecutive epochs (one or two stray epochs are not a stage).
    package var lightEpochs: Int = 4
    /// Awake counts when P(awake) reaches this and the epoch's movement reaches `movement`.
    package var awakeProbability: Double = 0.02
    package var movement: Double = 0.3
    /// An arousal: P(core) + P(awake) at least this, movement, and the heart rate this many bpm
    /// above the night's baseline (the median heart rate in bed before the window opened).
    package var arousalProbability: Double = 0.05
    package var heartRateRise: Double = 2
    /// Never wake while P(deep) is at or above this, whatever else holds.
    package var deepVeto: Double = 0.25
    /// Nor while P(REM) is: REM is not light sleep, and the live stager most often mistakes
    /// REM with a twitch for awake with movement.
    package var remVeto: Double = 0.9
    /// Baseline heart rates needed before the rise can be judged.
    package var minimumBaselineEpochs: Int = 20

    package init() {}
}
