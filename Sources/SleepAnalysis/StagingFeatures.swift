import Foundation

/// The model inputs of one night: a few robust features of what a bed sensor measures.
///
/// None is rank-normalised: a night with much wake must be able to look like one. Heart
/// rate is taken relative to the night's own low (its 10th percentile, in bpm), which
/// removes the person's resting rate but not the night's stage mix; RMSSD relative to the
/// night's median (log ratio). A feature that was not measured is nil and the model leaves it
/// out of that epoch (marginalises it), so a night without movement or without beats is
/// staged from what it has.
///
/// 0. movement — the strongest sign of wake on a bed sensor, in the night's own units:
///    log(1 + 10 · (movement − the night's median) / (its 95th percentile − its median)),
///    0 below the median. The pod's movement index (a log power ratio with a noise floor)
///    and a watch's activity counts (0 when still) share no unit; the median is the night's
///    still level and the 95th percentile its large movements, so the sensor's unit cancels;
/// 1. heart rate above the night's 10th percentile (bpm), smoothed ±1 epoch: wake and REM
///    run higher, deep sleep lowest, and it falls across the night;
/// 2. heart-rate spread — log of the SD of the epoch heart rates over ±4 epochs (4.5 min):
///    arousals and REM swing the heart rate, deep sleep is steady;
/// 3. log RMSSD minus the night's median (2.5-min window; beats only);
/// 4. hours since the start of the stay in bed (capped at 9): deep sleep comes early, REM late.
package enum StagingFeatures {
    package static let names = ["log_movement", "hr_above_p10", "log_hr_spread", "log_rmssd_rel", "hours_in_bed"]
    package static var count: Int { names.count }
    /// Column of the movement feature, of RMSSD (present only where beats were), and of
    /// hours in bed.
    package static let movementIndex = 0
    package static let rmssdIndex = 3
    package static let hoursInBedIndex = 4

    /// Epochs each side of an epoch for the heart-rate spread.
    package static let spreadHalfWidth = 4
    /// Fewest epoch heart rates in that window for a spread.
    package static let spreadMinimumEpochs = 5

    /// Smallest spread between the night's still level and its large movements (either
    /// unit): a night with no movement at all stays 0 instead of magnifying noise.
    package static let movementScaleFloor = 0.1

    /// Movement relative to the night's still level, scaled by its large movements (feature 0).
    static func relativeMovement(_ m: [Double?]) -> [Double?] {
        let sorted = m.compactMap { $0 }.sorted()
        guard !sorted.isEmpty else { return m.map { _ in nil } }
        let still = NightNormalization.quantile(sorted, 0.5)
        let scale = max(NightNormalization.quantile(sorted, 0.95) - still, movementScaleFloor)
        return m.map { v in v.map { log(1 + 10 * max(0, $0 - still) / scale) } }
    }

    /// One row of `count` optional values per epoch (nil = not measured).
    /// `movementMeasured` false: the input carries no movement signal at all.
    package static func matrix(_ epochs: [EpochFeatures], movementMeasured: Bool = true) -> [[Double?]] {
        let n = epochs.count
        let movement = relativeMovement(epochs.map { e in movementMeasured ? e.movement.flatMap { $0.isFinite ? max(0, $0) : nil } : nil })
        let hr = epochs.map(\.heartRate)
        let hrSorted = hr.compactMap { $0 }.sorted()
        let hrLow = hrSorted.isEmpty ? nil : NightNormalization.quantile(hrSorted, 0.1)
        let hrSmooth = NightNormalization.smoothed(hr, halfWidth: 1)
        let hrAbove: [Double?] = (0..<n).map { i in
            guard hr[i] != nil, let s = hrSmooth[i], let low = hrLow else { return nil }
            return s - low
        }
        let spread: [Double?] = (0..<n).map { i in
            let window = hr[max(0, i - spreadHalfWidth)...min(n - 1, i + spreadHalfWidth)].compactMap { $0 }
            guard hr[i] != nil, window.count >= spreadMinimumEpochs else { return nil }
            return log(0.5 + standardDeviation(window))
        }
        let logRMSSD = epochs.map { e in e.rmssd.flatMap { $0 > 0 ? log($0) : nil } }
        let rmssdSorted = logRMSSD.compactMap { $0 }.sorted()
        let rmssdMedian = rmssdSorted.isEmpty ? nil : NightNormalization.quantile(rmssdSorted, 0.5)
        let rmssdRel = logRMSSD.map { v in v.flatMap { x in rmssdMedian.map { x - $0 } } }
        return (0..<n).map { i in
            [movement[i], hrAbove[i], spread[i], rmssdRel[i], min(9, Double(i) * epochLength / 3600)]
        }
    }
}
