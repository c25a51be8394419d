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
/// 4. hours since the start of the stay in bed (capped at 9): deep sleep comes early, REM late;
/// 5. heart rate with its trend across the night removed (a least-squares parabola over the
///    night's hours), then as feature 1: smoothed ±1 epoch, above its 10th percentile (bpm).
///    An apnoea patient's heart drifts through the night whatever the stage; the beats model
///    reads this instead of feature 1 (chosen by nested leave-one-subject-out,
///    docs/staging.md), the others read feature 1.
package enum StagingFeatures {
    package static let names = ["log_movement", "hr_above_p10", "log_hr_spread", "log_rmssd_rel", "hours_in_bed",
                                "hr_detrended_above_p10"]
    package static var count: Int { names.count }
    /// Column of the movement feature, of RMSSD (present only where beats were), and of
    /// hours in bed.
    package static let movementIndex = 0
    package static let rmssdIndex = 3
    package static let hoursInBedIndex = 4
    /// Columns of the heart rate above the night's low, as measured and with its trend removed.
    package static let heartRateIndex = 1
    package static let detrendedHeartRateIndex = 5

    /// Shortest span of heart rates (hours) a trend is fitted over, and fewest epochs with a
    /// heart rate in it: a shorter or sparser night (or the first hours of a live one) keeps its
    /// heart rate as it is, since a parabola through an hour or two would take the stages' own
    /// swings for the night's drift.
    package static let trendMinimumHours = 2.0
    package static let trendMinimumEpochs = 120

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
        // Feature 5: feature 1 computed after the night's trend is taken off every rate.
        let hours = (0..<n).map { Double($0) * epochLength / 3600 }
        let trend = nightTrend(hours: hours, values: hr)
        let hrDetrendedSorted = (0..<n).compactMap { i in hr[i].map { $0 - trend(hours[i]) } }.sorted()
        let hrDetrendedLow = hrDetrendedSorted.isEmpty ? nil : NightNormalization.quantile(hrDetrendedSorted, 0.1)
        let detrended: [Double?] = (0..<n).map { i in
            guard hr[i] != nil, let s = hrSmooth[i], let low = hrDetrendedLow else { return nil }
            return s - trend(hours[i]) - low
        }
        let logRMSSD = epochs.map { e in e.rmssd.flatMap { $0 > 0 ? log($0) : nil } }
        let rmssdSorted = logRMSSD.compactMap { $0 }.sorted()
        let rmssdMedian = rmssdSorted.isEmpty ? nil : NightNormalization.quantile(rmssdSorted, 0.5)
        let rmssdRel = logRMSSD.map { v in v.flatMap { x in rmssdMedian.map { x - $0 } } }
        return (0..<n).map { i in
            [movement[i], hrAbove[i], spread[i], rmssdRel[i], min(9, hours[i]), detrended[i]]
        }
    }

    /// The night's drift of `values` over `hours`: the least-squares parabola b·t + c·t²
    /// (without its level, which the 10th percentile takes). Zero when the values span less
    /// than `trendMinimumHours`, has fewer than `trendMinimumEpochs` values, or the fit is
    /// degenerate.
    static func nightTrend(hours: [Double], values: [Double?]) -> (Double) -> Double {
        let points = zip(hours, values).compactMap { t, v in v.flatMap { $0.isFinite ? (t, $0) : nil } }
        guard points.count >= trendMinimumEpochs, let first = points.first?.0, let last = points.last?.0,
              last - first >= trendMinimumHours else { return { _ in 0 } }
        // Normal equations of y = a + b·t + c·t²: sums of t^0…t^4 and of y·t^0…t^2.
        var s = [Double](repeating: 0, count: 5), r = [Double](repeating: 0, count: 3)
        for (t, y) in points {
            var p = 1.0
            for k in 0..<5 { s[k] += p; if k < 3 { r[k] += p * y }; p *= t }
        }
        guard let inverse = invert([[s[0], s[1], s[2]], [s[1], s[2], s[3]], [s[2], s[3], s[4]]]) else { return { _ in 0 } }
        let b = (0..<3).reduce(0.0) { $0 + inverse[1][$1] * r[$1] }
        let c = (0..<3).reduce(0.0) { $0 + inverse[2][$1] * r[$1] }
        guard b.isFinite, c.isFinite else { return { _ in 0 } }
        return { t in b * t + c * t * t }
    }
}
