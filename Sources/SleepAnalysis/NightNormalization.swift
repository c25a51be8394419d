import Foundation
import SleepDomain

/// Per-night normalisation of features.
///
/// Absolute heart rate and HRV differ several-fold between people (and with age, weight,
/// medication), but within a night wake has a higher, more variable heart rate and lower
/// RMSSD than sleep. Mapping each feature to normal scores of its rank within the night
/// (rank-based inverse normal transform) removes the person and keeps the night's shape;
/// it is also immune to outliers, which matters with apnoea-driven heart-rate swings.
public enum NightNormalization {
    /// Normal scores of the ranks of the non-nil values (ties get their average rank);
    /// nil stays nil.
    public static func normalScores(_ values: [Double?]) -> [Double?] {
        let present = values.enumerated().compactMap { i, v in v.flatMap { $0.isFinite ? (i, $0) : nil } }
        guard !present.isEmpty else { return values.map { _ in nil } }
        let sorted = present.sorted { $0.1 < $1.1 }
        var out = [Double?](repeating: nil, count: values.count)
        let n = Double(sorted.count)
        var i = 0
        while i < sorted.count {
            var j = i
            while j + 1 < sorted.count, sorted[j + 1].1 == sorted[i].1 { j += 1 }
            let rank = Double(i + j) / 2 // zero-based average rank of the tie group
            let z = StandardNormal.quantile((rank + 0.5) / n)
            for k in i...j { out[sorted[k].0] = z }
            i = j + 1
        }
        return out
    }

    /// Percentile ranks 0…1 of the non-nil values (average rank for ties).
    public static func percentiles(_ values: [Double?]) -> [Double?] {
        normalScores(values).map { $0.map(StandardNormal.cdf) }
    }

    /// Centred moving mean over ±`halfWidth` entries, ignoring nils (nil if all are nil).
    public static func smoothed(_ values: [Double?], halfWidth: Int) -> [Double?] {
        let n = values.count
        var prefix = [Double](repeating: 0, count: n + 1)
        var counts = [Int](repeating: 0, count: n + 1)
        for i in 0..<n {
            prefix[i + 1] = prefix[i] + (values[i] ?? 0)
            counts[i + 1] = counts[i] + (values[i] == nil ? 0 : 1)
        }
        return (0..<n).map { i in
            let a = max(0, i - halfWidth), b = min(n, i + halfWidth + 1)
            let c = counts[b] - counts[a]
            return c == 0 ? nil : (prefix[b] - prefix[a]) / Double(c)
        }
    }

    /// Robust z-scores: (x − median) / (IQR / 1.349), nil stays nil.
    public static func robustZ(_ values: [Double?]) -> [Double?] {
        var xs = values.compactMap { $0 }
        guard xs.count >= 2 else { return values.map { $0 == nil ? nil : 0 } }
        xs.sort()
        let med = quantile(xs, 0.5)
        let iqr = quantile(xs, 0.75) - quantile(xs, 0.25)
        let scale = iqr > 0 ? iqr / 1.349 : 1
        return values.map { $0.map { ($0 - med) / scale } }
    }

    /// Linear-interpolated quantile of sorted values.
    static func quantile(_ sorted: [Double], _ p: Double) -> Double {
        let pos = p * Double(sorted.count - 1)
        let lo = Int(pos.rounded(.down)), hi = min(sorted.count - 1, lo + 1)
        return sorted[lo] + (pos - Double(lo)) * (sorted[hi] - sorted[lo])
    }
}
