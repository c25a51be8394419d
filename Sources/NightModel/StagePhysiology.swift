import Foundation
import SleepDomain

/// How the heart and breathing behave in one sleep stage: the per-stage constants the
/// night model draws heart rate, beat-to-beat intervals and breathing from.
///
/// Calibrated against real nights (slpdb-dev, nine PSG-scored ECG nights; figures in
/// docs/front-end.md "Calibration against slpdb-dev"): measured with the analyzer's own
/// epoch features per scored stage and per record, then matched on the model's nights
/// relative to core sleep (relative, because people differ far more than stages):
/// light (core) sleep has the highest beat-to-beat variability (RMSSD, pNN50), awake the
/// lowest; deep sleep is the steadiest (lowest heart-rate SD over minutes, least slow
/// wander) with RMSSD a little below core; REM has the widest slow heart-rate swings
/// with RMSSD below core; awake runs about 5 bpm above core, REM and deep a little above.
///
/// The slow heart-rate wander (`wanderSD`) was then matched to healthy sleepers
/// (sleep-accel-dev, 21 nights; 2026-11-24): slpdb's apnoea patients swing their heart rate in
/// light sleep as much as in REM, healthy sleepers do not. Matched on the staging model's
/// heart-rate spread (log(0.5 + SD of epoch heart rates over ±4 epochs)) per stage, measured
/// through the front end on virtual-pod nights (`podbridge-bench --dump-epochs`):
/// sleep-accel awake 1.33, core 0.71, deep 0.38, REM 1.15; the model's nights now 1.31, 0.80,
/// 0.40, 1.12 (before: 1.31, 1.25, 0.61, 1.68, with wander 3.2 / 3.8 / 1.4 / 7.5 bpm).
struct StagePhysiology: Sendable {
    /// Heart-rate offset from the sleeper's resting (core) rate, bpm.
    var heartRateOffset: Double
    /// Breathing-rate offset from the sleeper's light-sleep rate, breaths per minute.
    var breathingOffset: Double
    /// Slow heart-rate wander (very-low-frequency, Ornstein–Uhlenbeck): SD in bpm and time constant in s.
    var wanderSD: Double
    var wanderTau: Double
    /// Slow breathing-rate wander: SD in breaths per minute and time constant in s.
    var breathingWanderSD: Double
    var breathingWanderTau: Double
    /// Breath-to-breath amplitude irregularity (fraction).
    var breathIrregularity: Double
    /// Respiratory sinus arrhythmia: half peak-to-peak RR modulation over a breath, fraction of RR.
    var rsa: Double
    /// Low-frequency (baroreflex, ~0.1 Hz) RR modulation, fraction of RR.
    var lowFrequency: Double
    /// Beat-to-beat RR noise SD, fraction of RR.
    var jitter: Double
    /// Body movements per hour while in this stage.
    var movementsPerHour: Double

    static func of(_ stage: SleepStage) -> StagePhysiology { table[stage]! }

    /// Calibrated values (see the type's comment); `hrvScale` multiplies rsa, lowFrequency and jitter.
    static let table: [SleepStage: StagePhysiology] = [
        .awake: StagePhysiology(heartRateOffset: 5.5, breathingOffset: 2, wanderSD: 3.7, wanderTau: 40,
                                breathingWanderSD: 1.2, breathingWanderTau: 40, breathIrregularity: 0.2,
                                rsa: 0.012, lowFrequency: 0.04, jitter: 0.013, movementsPerHour: 25),
        .core: StagePhysiology(heartRateOffset: 0, breathingOffset: 0, wanderSD: 1.3, wanderTau: 60,
                               breathingWanderSD: 0.5, breathingWanderTau: 120, breathIrregularity: 0.08,
                               rsa: 0.029, lowFrequency: 0.045, jitter: 0.014, movementsPerHour: 3),
        .deep: StagePhysiology(heartRateOffset: 2, breathingOffset: -1, wanderSD: 1.0, wanderTau: 90,
                               breathingWanderSD: 0.25, breathingWanderTau: 180, breathIrregularity: 0.04,
                               rsa: 0.028, lowFrequency: 0.02, jitter: 0.012, movementsPerHour: 0.8),
        .rem: StagePhysiology(heartRateOffset: 3.5, breathingOffset: 1.5, wanderSD: 3.6, wanderTau: 40,
                              breathingWanderSD: 1.5, breathingWanderTau: 20, breathIrregularity: 0.2,
                              rsa: 0.012, lowFrequency: 0.03, jitter: 0.013, movementsPerHour: 4),
    ]
}
