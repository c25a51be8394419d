/// Beat-to-beat intervals with ectopic and artefact beats marked, so HRV is computed
/// only from normal-to-normal intervals.
///
/// A missed beat doubles an interval and an ectopic beat makes a short–long pair; both
/// would dominate RMSSD. An interval is kept when it is physiological (0.3–2.0 s, i.e.
/// 30–200 bpm) and within 20 % of the median of the 11 intervals around it. Gaps (no
/// beats for a while) simply produce no intervals there: nothing is interpolated.
package struct BeatIntervals: Sendable {
    /// Interval lengths in seconds; `times[i]` is the time of the beat that ends interval i.
    package let lengths: [Double]
    package let times: [Double]
    /// Whether interval i is a clean normal-to-normal interval.
    package let clean: [Bool]

    package static let shortest = 0.3
    package static let longest = 2.0
    package static let medianHalfWidth = 5
    package static let maxDeviation = 0.2

    /// `beats` must be sorted ascending (parsers guarantee it); unsorted pairs are dropped.
    package init(beats: [Double]) {
        var lengths: [Double] = []
        var times: [Double] = []
        lengths.reserveCapacity(max(0, beats.count - 1))
        times.reserveCapacity(max(0, beats.count - 1))
        if beats.count > 1 {
            for i in 1..<beats.count {
                let d = beats[i] - beats[i - 1]
                guard d > 0, d.isFinite else { continue }
                lengths.append(d)
                times.append(beats[i])
            }
        }
        var clean = [Bool](repeating: false, count: lengths.count)
        var window: [Double] = []
        window.reserveCapacity(2 * Self.medianHalfWidth + 1)
        for i in 0..<lengths.count {
            let rr = lengths[i]
            guard rr > Self.shortest, rr < Self.longest else { continue }
            window.removeAll(keepingCapacity: true)
            let lo = max(0, i - Self.medianHalfWidth)
            let hi = min(lengths.count - 1, i + Self.medianHalfWidth)
            for j in lo...hi { window.append(lengths[j]) }
            let m = median(&window)
            clean[i] = abs(rr - m) < Self.maxDeviation * m
        }
        self.lengths = lengths
        self.times = times
        self.clean = clean
    }
}

/// Median of `values` (sorts in place); the mean of the two middle values for even counts.
func median(_ values: inout [Double]) -> Double {
    values.sort()
    let n = values.count
    if n == 0 { return .nan }
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2
}
