import Foundation

/// A value at a time, for series that come at their own pace (HRV from a vitals file,
/// breathing and movement samples in a beats file).
public struct TimedValue: Sendable, Hashable, Codable {
    public var time: Double
    public var value: Double
    public init(time: Double, value: Double) { self.time = time; self.value = value }
}

/// Turns beat times and per-second vitals into per-epoch features on a grid of epochs.
///
/// Beat-derived HRV uses windows centred on the epoch (±2 epochs = 2.5 min for RMSSD,
/// SDNN, pNN50; ±4 epochs = 4.5 min for heart-rate SD) because 30 s holds too few beats
/// for a stable estimate. A window needs enough clean intervals (30 and 50) or the value
/// is nil: gaps in the beats stay gaps.
public struct EpochFeatureExtractor: Sendable {
    public static let hrvHalfWindow = 2
    public static let heartRateSDHalfWindow = 4
    public static let minCleanForHRV = 30
    public static let minCleanForHeartRateSD = 50
    public static let minCleanForHeartRate = 10

    public var timeZone: TimeZone

    public init(timeZone: TimeZone) { self.timeZone = timeZone }

    /// Features for `count` epochs starting at `gridStart` (a multiple of 30 s).
    /// `present` is left true here; the analyzer sets presence from its in-bed rule.
    public func features(gridStart: Double, count: Int, beats: [Double], vitals: [SecondVitals],
                         hrv: [TimedValue] = [], breathing: [TimedValue] = [],
                         movement: [TimedValue] = [], vitalsMovementMeasured: Bool = true) -> [EpochFeatures] {
        guard count > 0 else { return [] }
        var out = (0..<count).map { i -> EpochFeatures in
            EpochFeatures(clockHour: clockHour(gridStart + Double(i) * epochLength))
        }
        let intervals = BeatIntervals(beats: beats)
        if !intervals.lengths.isEmpty {
            addBeatFeatures(&out, gridStart: gridStart, intervals: intervals)
        }
        addVitals(&out, gridStart: gridStart, vitals: vitals, hrv: hrv,
                  breathing: breathing, movement: movement, vitalsMovement: vitalsMovementMeasured,
                  haveBeats: !intervals.lengths.isEmpty)
        return out
    }

    func clockHour(_ t: Double) -> Double {
        let offset = Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: t)))
        let local = (t + offset).truncatingRemainder(dividingBy: 86_400)
        return (local < 0 ? local + 86_400 : local) / 3600
    }

    private func epochIndex(_ t: Double, _ gridStart: Double) -> Int {
        Int(((t - gridStart) / epochLength).rounded(.down))
    }

    private func addBeatFeatures(_ out: inout [EpochFeatures], gridStart: Double, intervals: BeatIntervals) {
        let n = out.count
        let rr = intervals.lengths
        // first[e] = first interval index in epoch e (intervals sorted by time).
        var first = [Int](repeating: rr.count, count: n + 1)
        var e = 0
        for i in 0..<rr.count {
            let k = epochIndex(intervals.times[i], gridStart)
            guard k >= 0 else { continue }
            while e <= min(k, n) { first[e] = i; e += 1 }
        }
        func range(_ lo: Int, _ hi: Int) -> Range<Int> {
            let a = first[max(0, lo)], b = first[min(n, hi + 1)]
            return a..<max(a, b)
        }
        for ep in 0..<n {
            // Epoch's own intervals: mean heart rate, counts, coverage.
            var sum = 0.0, cleanCount = 0, total = 0
            for i in range(ep, ep) {
                total += 1
                if intervals.clean[i] { sum += rr[i]; cleanCount += 1 }
            }
            out[ep].beats = total
            out[ep].rejectedBeats = total - cleanCount
            out[ep].quality = min(1, sum / epochLength)
            if cleanCount >= Self.minCleanForHeartRate { out[ep].heartRate = 60 / (sum / Double(cleanCount)) }

            // ±2 epochs: RMSSD, SDNN, pNN50.
            let w = range(ep - Self.hrvHalfWindow, ep + Self.hrvHalfWindow)
            var s = 0.0, s2 = 0.0, c = 0, d2 = 0.0, dc = 0, big = 0
            for i in w where intervals.clean[i] {
                s += rr[i]; s2 += rr[i] * rr[i]; c += 1
                if i > w.lowerBound, intervals.clean[i - 1] {
                    let d = rr[i] - rr[i - 1]
                    d2 += d * d; dc += 1
                    if abs(d) > 0.05 { big += 1 }
                }
            }
            if c >= Self.minCleanForHRV {
                let mean = s / Double(c)
                out[ep].sdnn = (max(0, s2 / Double(c) - mean * mean)).squareRoot() * 1000
                if dc > 0 {
                    out[ep].rmssd = (d2 / Double(dc)).squareRoot() * 1000
                    out[ep].pnn50 = Double(big) / Double(dc)
                }
            }
            // ±4 epochs: SD of instantaneous heart rate.
            var h = 0.0, h2 = 0.0, hc = 0
            for i in range(ep - Self.heartRateSDHalfWindow, ep + Self.heartRateSDHalfWindow)
            where intervals.clean[i] {
                let bpm = 60 / rr[i]
                h += bpm; h2 += bpm * bpm; hc += 1
            }
            if hc >= Self.minCleanForHeartRateSD {
                let m = h / Double(hc)
                out[ep].heartRateSD = max(0, h2 / Double(hc) - m * m).squareRoot()
            }
        }
    }

    private func addVitals(_ out: inout [EpochFeatures], gridStart: Double, vitals: [SecondVitals],
                           hrv: [TimedValue], breathing: [TimedValue], movement: [TimedValue],
                           vitalsMovement: Bool, haveBeats: Bool) {
        let n = out.count
        var hr = [[Double]](repeating: [], count: n)
        var br = [[Double]](repeating: [], count: n)
        var mv = [[Double]](repeating: [], count: n)
        var q = [[Double]](repeating: [], count: n)
        var rm = [[Double]](repeating: [], count: n)
        for v in vitals {
            let k = epochIndex(v.time, gridStart)
            guard k >= 0, k < n else { continue }
            if let x = v.heartRate.value { hr[k].append(x) }
            if let x = v.breathingRate.value { br[k].append(x) }
            if vitalsMovement { mv[k].append(v.movement) }
            if v.present { q[k].append(v.quality) }
        }
        for s in hrv { let k = epochIndex(s.time, gridStart); if k >= 0, k < n { rm[k].append(s.value) } }
        for s in breathing { let k = epochIndex(s.time, gridStart); if k >= 0, k < n { br[k].append(s.value) } }
        for s in movement { let k = epochIndex(s.time, gridStart); if k >= 0, k < n { mv[k].append(s.value) } }

        for ep in 0..<n {
            if let m = mean(br[ep]) { out[ep].breathingRate = m }
            var window: [Double] = []
            for j in max(0, ep - Self.hrvHalfWindow)...min(n - 1, ep + Self.hrvHalfWindow) { window += br[j] }
            if window.count >= 30, let m = mean(window), m > 0 {
                out[ep].breathingVariability = standardDeviation(window) / m
            }
            if let m = mean(mv[ep]) { out[ep].movement = m }
            guard !haveBeats else { continue }
            // No beats: heart rate and HRV come from the per-second readings instead.
            if let m = mean(hr[ep]) { out[ep].heartRate = m }
            if let m = mean(rm[ep]) { out[ep].rmssd = m }
            if let m = mean(q[ep]) { out[ep].quality = m }
            var hw: [Double] = []
            for j in max(0, ep - Self.heartRateSDHalfWindow)...min(n - 1, ep + Self.heartRateSDHalfWindow) { hw += hr[j] }
            if hw.count >= 60 { out[ep].heartRateSD = standardDeviation(hw) }
        }
    }
}

func mean(_ xs: [Double]) -> Double? {
    xs.isEmpty ? nil : xs.reduce(0, +) / Double(xs.count)
}

/// Population standard deviation.
func standardDeviation(_ xs: [Double]) -> Double {
    guard let m = mean(xs) else { return .nan }
    return (xs.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(xs.count)).squareRoot()
}
