/// Sessions from presence: one session is one continuous stay in bed.
///
/// Short absences (a trip to the bathroom) must not cut a night in two, so runs of
/// in-bed epochs closer than `maxGap` are merged; a merged stay shorter than
/// `minDuration` (someone sitting on the bed) is dropped. A nap is simply a session.
package struct SessionRules: Sendable, Codable, Hashable {
    /// Longest absence (seconds) that does not split a session.
    package var maxGap: Double
    /// Shortest session (seconds, first in-bed epoch start to last in-bed epoch end) kept.
    package var minDuration: Double

    package init(maxGap: Double = 20 * 60, minDuration: Double = 15 * 60) {
        self.maxGap = maxGap; self.minDuration = minDuration
    }

    /// Index ranges of sessions on a grid of epochs with the given presence.
    package func sessions(present: [Bool]) -> [Range<Int>] {
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
            if let last = merged.last,
               Double(run.lowerBound - last.upperBound) * epochLength <= maxGap {
                merged[merged.count - 1] = last.lowerBound..<run.upperBound
            } else {
                merged.append(run)
            }
        }
        return merged.filter { Double($0.count) * epochLength >= minDuration }
    }
}
