/// The thresholds of the smart-wake rule, chosen on 360 virtual-pod nights (seeds 700–1059)
/// with the shipped stager's forward-filtered stages, confirmed on 360 more (1100–1459) and
/// measured on 360 nights never used to choose them (seeds 2000–2359; docs/smart-wake.md).
/// Light sleep must show for a minute and a half, waking needs movement, an arousal needs
/// the heart rate up on the night's baseline; deep sleep, deep sleep coming on and likely
/// REM veto everything.
package struct SmartWakeRule: Sendable, Hashable, Codable {
    /// Light sleep counts when P(core) reaches this …
    package var lightProbability: Double = 0.5
    /// … for this many consecutive epochs (one or two stray epochs are not a stage).
    package var lightEpochs: Int = 3
    /// Awake counts when P(awake) reaches this and the epoch's movement reaches `movement`.
    package var awakeProbability: Double = 0.5
    package var movement: Double = 1.0
    /// An arousal: P(core) + P(awake) at least this, movement, and the heart rate this many bpm
    /// above the night's baseline (the median heart rate in bed before the window opened).
    package var arousalProbability: Double = 0.3
    package var heartRateRise: Double = 4
    /// Never wake while P(deep) is at or above this, whatever else holds.
    package var deepVeto: Double = 0.05
    /// Nor while P(deep) has risen by this much over the last `deepRiseEpochs` epochs: the
    /// sleeper is going down into deep sleep. The live stager is slow to call deep sleep (a
    /// short morning deep period stays under any veto), but its P(deep) creeps up from the
    /// first minutes; on the calibration nights most wakes that found deep sleep came
    /// right there, in "light sleep" with P(deep) 0.01 → 0.04.
    package var deepRise: Double = 0.002
    package var deepRiseEpochs: Int = 2
    /// Nor while REM is more likely than not: REM is not light sleep, and the live stager most
    /// often mistakes REM with a twitch for awake with movement.
    package var remVeto: Double = 0.5
    /// Baseline heart rates needed before the rise can be judged.
    package var minimumBaselineEpochs: Int = 20

    package init() {}
}
