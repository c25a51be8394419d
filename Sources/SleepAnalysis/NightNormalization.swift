import Foundation

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
            let z = inverseNormalCDF((rank + 0.5) / n)
            for k in i...j { out[sorted[k].0] = z }
            i = j + 1
        }
        return out
    }

    /// Percentile ranks 0…1 of the non-nil values (average rank for ties).
    public static func percentiles(_ values: [Double?]) -> [Double?] {
        normalScores(values).map { $0.map(normalCDF) }
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

/// Standard normal CDF.
func normalCDF(_ z: Double) -> Double {
    0.5 * erfc(-z / 2.0.squareRoot())
}

/// Inverse standard normal CDF (Acklam's rational approximation, relative error < 1.2e-9).
func inverseNormalCDF(_ p: Double) -> Double {
    let a = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
    let b = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
             6.680131188771972e+01, -1.328068155288572e+01]
    let c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00]
    let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
    let p = min(max(p, 1e-12), 1 - 1e-12)
    let low = 0.02425
    if p < low {
        let q = (-2 * log(p)).squareRoot()
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    }
    if p > 1 - low {
        let q = (-2 * log(1 - p)).squareRoot()
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
            ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    }
    let q = p - 0.5, r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
}
