/// Sessions from presence: one session is one continuous stay in bed.
///
/// Short absences (a trip to the bathroom) must not cut a night in two, so runs of
/// in-bed epochs closer than `maxGap` are merged; a merged stay shorter than
/// `minDuration` (someone sitting on the bed) is dropped. A nap is simply a session.
/// An epoch without any data (the pod's link down) is no absence: nobody saw the side
/// empty, so a hole of up to `maxDataGap` keeps the stay whole, as the hub's
/// `SessionTracker` does live.
package struct SessionRules: Sendable, Codable, Hashable {
    /// Longest absence (seconds) that does not split a session.
    package var maxGap: Double
    /// Shortest session (seconds, first in-bed epoch start to last in-bed epoch end) kept.
    package var minDuration: Double
    /// Longest stretch without data (seconds) that does not split a session.
    package var maxDataGap: Double

    /// Three hours: longer than a link should stay down within a night, shorter than a day.
    package static let defaultMaxDataGap: Double = 3 * 3600

    package init(maxGap: Double = 20 * 60, minDuration: Double = 15 * 60, maxDataGap: Double = defaultMaxDataGap) {
        self.maxGap = maxGap; self.minDuration = minDuration; self.maxDataGap = maxDataGap
    }

    /// Index ranges of sessions on a grid of epochs with the given presence. `seenEmpty`
    /// marks the absent epochs whose data say the side was empty; the other absent epochs are
    /// holes in the data. Without it every absent epoch counts as seen empty.
    package func sessions(present: [Bool], seenEmpty: [Bool]? = nil) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var i = 0
        while i < present.count {
            guard present[i] else { i += 1; continue }
            var j = i
            while j < present.count, present[j] { j += 1 }
            runs.append(i..<j)
            i = j
        }
        var merged: [Range<Int>] = []
        for run in runs {
            if let last = merged.last, !splits(gap: last.upperBound..<run.lowerBound, seenEmpty: seenEmpty) {
                merged[merged.count - 1] = last.lowerBound..<run.upperBound
            } else {
                merged.append(run)
            }
        }
        return merged.filter { Double($0.count) * epochLength >= minDuration }
    }

    /// Whether the absent epochs `gap` between two stays end the first: the side seen empty
    /// more than `maxGap` after the stay's last epoch, or a hole longer than `maxDataGap`.
    func splits(gap: Range<Int>, seenEmpty: [Bool]?) -> Bool {
        guard let seenEmpty else { return Double(gap.count) * epochLength > maxGap }
        var hole = 0
        for k in gap {
            if seenEmpty[k] {
                if Double(k + 1 - gap.lowerBound) * epochLength > maxGap { return true }
                hole = 0
            } else {
                hole += 1
                if Double(hole) * epochLength > maxDataGap { return true }
            }
        }
        return false
    }
}
