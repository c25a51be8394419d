/// The thresholds of the smart-wake rule, chosen on 120 virtual-pod nights (seeds 700–819)
/// with the shipped staging model's forward-filtered stages and measured on 360 nights never
/// used to choose them (seeds 2000–2359; docs/smart-wake.md). Light sleep must show for two and a half
/// minutes, waking needs movement, an arousal needs the heart rate up on the night's
/// baseline; deep sleep and likely REM veto everything.
package struct SmartWakeRule: Sendable, Hashable, Codable {
    /// Light sleep counts when P(core) reaches this …
    package var lightProbability: Double = 0.5
    /// … for this many consecutive epochs (one or two stray epochs are not a stage).
    package var lightEpochs: Int = 5
    /// Awake counts when P(awake) reaches this and the epoch's movement reaches `movement`.
    package var awakeProbability: Double = 0.5
    package var movement: Double = 1.0
    /// An arousal: P(core) + P(awake) at least this, movement, and the heart rate this many bpm
    /// above the night's baseline (the median heart rate in bed before the window opened).
    package var arousalProbability: Double = 0.3
    package var heartRateRise: Double = 4
    /// Never wake while P(deep) is at or above this, whatever else holds.
    package var deepVeto: Double = 0.2
    /// Nor while REM is more likely than not: REM is not light sleep, and the live stager most
    /// often mistakes REM with a twitch for awake with movement.
    package var remVeto: Double = 0.5
    /// Baseline heart rates needed before the rise can be judged.
    package var minimumBaselineEpochs: Int = 20

    package init() {}
}
