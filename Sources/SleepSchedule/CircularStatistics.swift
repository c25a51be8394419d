import Foundation
import SleepDomain

/// Mean direction and spread of times of day on the 24-hour circle. Each time is an angle
/// θ = 2π·m/1440 (m = minutes after midnight); the mean is the direction of the mean unit
/// vector, so 23:50 and 00:10 average to 00:00 and never to 12:00.
public struct CircularSummary: Hashable, Sendable {
    /// Number of times summarised.
    public let count: Int
    /// Circular mean in minutes after midnight, 0 ≤ value < 1440.
    public let meanMinute: Double
    /// Mean resultant length R = |mean unit vector|, 0…1: 1 when every time is identical,
    /// near 0 when times are spread evenly round the clock (then the mean means little).
    public let resultantLength: Double
    /// Circular standard deviation √(−2 ln R), converted to minutes (∞ when R = 0).
    public let circularSDMinutes: Double

    /// The mean rounded to the nearest minute.
    public var mean: TimeOfDay { TimeOfDay(wrapping: Int(meanMinute.rounded())) }
}

/// Circular statistics over minutes of the day. Pure functions, no state.
public enum CircularStatistics {
    static let minutesPerDay = Double(TimeOfDay.minutesPerDay)
    static let radiansPerMinute = 2 * Double.pi / minutesPerDay

    /// Mean, R and circular SD of `minutes`; nil when the list is empty or holds a non-finite value.
    public static func summary(ofMinutes minutes: [Double]) -> CircularSummary? {
        guard !minutes.isEmpty, minutes.allSatisfy(\.isFinite) else { return nil }
        var c = 0.0, s = 0.0
        for m in minutes {
            let angle = m * radiansPerMinute
            c += cos(angle)
            s += sin(angle)
        }
        c /= Double(minutes.count)
        s /= Double(minutes.count)
        let r = min(1, (c * c + s * s).squareRoot())
        let meanAngle = r > 0 ? atan2(s, c) : 0
        let mean = normalize(meanAngle / radiansPerMinute)
        // Identical times give R a hair under 1 from rounding; snap so the SD reads 0.
        let rr = r > 1 - 1e-12 ? 1 : r
        let sd = rr > 0 ? (max(0, -2 * log(rr))).squareRoot() / radiansPerMinute : .infinity
        return CircularSummary(count: minutes.count, meanMinute: mean, resultantLength: rr, circularSDMinutes: sd)
    }

    /// Shortest distance between two times on the clock, 0…720 minutes.
    public static func distance(_ a: Double, _ b: Double) -> Double {
        abs(signedDifference(a, from: b))
    }

    /// `a − b` on the clock, in (−720, 720] minutes: positive when `a` is later than `b`.
    public static func signedDifference(_ a: Double, from b: Double) -> Double {
        var d = normalize(a - b)
        if d > minutesPerDay / 2 { d -= minutesPerDay }
        return d
    }

    /// Wraps any minute value onto 0 ≤ value < 1440.
    public static func normalize(_ minutes: Double) -> Double {
        let r = minutes.truncatingRemainder(dividingBy: minutesPerDay)
        let v = r < 0 ? r + minutesPerDay : r
        return v >= minutesPerDay ? 0 : v
    }

    /// Circular median: the sample time with the smallest summed distance to all others (ties
    /// go to the earliest such time after midnight). Robust to a few wild values, unlike the mean,
    /// so it anchors the outlier rule. Nil for an empty list.
    public static func median(ofMinutes minutes: [Double]) -> Double? {
        guard !minutes.isEmpty, minutes.allSatisfy(\.isFinite) else { return nil }
        let sorted = minutes.map(normalize).sorted()
        var best = sorted[0]
        var bestCost = Double.infinity
        for candidate in sorted {
            let cost = sorted.reduce(0) { $0 + distance($1, candidate) }
            if cost < bestCost - 1e-9 {
                bestCost = cost
                best = candidate
            }
        }
        return best
    }

    /// Ordinary median of non-negative values (used for distances); nil when empty.
    static func linearMedian(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let s = values.sorted()
        let mid = s.count / 2
        return s.count % 2 == 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
    }
}
