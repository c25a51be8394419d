import Foundation

/// A sleep stage as the model plays it. Raw values are Apple Health's names, the same
/// strings the analyzer uses, without this module depending on the analyzer.
public enum ModelStage: String, Sendable, Codable, CaseIterable, Hashable {
    case awake, core, deep, rem
}

/// The sleeper's night as stage segments: get in, lie awake (sleep-onset latency), then
/// ~90-minute cycles with deep sleep shrinking and REM growing across the night, brief
/// awakenings mostly at cycle ends, an optional bathroom trip, and a final awakening.
struct Hypnogram: Sendable {
    /// Per second: the stage, or nil when the sleeper is out of bed.
    var stages: [ModelStage?]
    /// In-bed intervals in seconds (start inclusive, end exclusive).
    var inBed: [(start: Int, end: Int)]

    init(duration: Int, profile: SleeperProfile, rng: inout SplitMix64) {
        stages = [ModelStage?](repeating: nil, count: duration)
        inBed = []
        guard duration > 0 else { return }
        let d = Double(duration)
        let getIn = min(profile.getsIn ?? rng.uniform(180, 600), d * 0.1)
        let outBefore = min(profile.getsOutBeforeEnd ?? rng.uniform(180, 600), d * 0.1)
        let tIn = Int(getIn.rounded()), tOut = max(tIn, duration - Int(outBefore.rounded()))
        guard tOut > tIn else { return }

        // Stage segments in seconds, from getting in to getting out.
        var segments: [(ModelStage?, Double)] = []
        let latency = (profile.sleepOnsetLatency ?? rng.uniform(6, 25)) * 60
        segments.append((.awake, latency))
        let span = Double(tOut - tIn)
        let finalWake = rng.uniform(120, 480)
        let sleepEnd = span - finalWake
        let wantsTrip = profile.bathroomTrip ?? rng.chance(0.5)
        let tripAfter = span * rng.uniform(0.4, 0.6)
        var tripDone = !wantsTrip
        var elapsed = latency
        var cycle = 0
        func add(_ stage: ModelStage?, _ seconds: Double) {
            guard seconds > 0 else { return }
            segments.append((stage, seconds))
            elapsed += seconds
        }
        while elapsed < sleepEnd {
            let k = Double(cycle)
            let length = min(max(rng.uniform(80, 110) + 4 * rng.gaussian(), 75), 120) * 60
            var deep = max(0, (38 - 11 * k) + rng.uniform(-5, 5)) * 60
            if cycle >= 4 { deep = rng.chance(0.3) ? rng.uniform(2, 6) * 60 : 0 }
            let rem = min(6 + 8 * k + rng.uniform(-3, 4), 38) * 60
            let coreB = rng.uniform(3, 8) * 60
            var coreA = length - deep - rem - coreB
            if coreA < 8 * 60 { deep = max(0, deep - (8 * 60 - coreA)); coreA = length - deep - rem - coreB }
            // Light sleep first, sometimes broken by a brief arousal.
            if rng.chance(0.3) {
                let first = coreA * rng.uniform(0.3, 0.7)
                add(.core, first)
                add(.awake, rng.uniform(30, 120))
                add(.core, coreA - first)
            } else {
                add(.core, coreA)
            }
            add(.deep, deep)
            add(.core, coreB)
            if cycle > 0 && rng.chance(0.25) {
                // REM interrupted by a short awakening.
                let first = rem * rng.uniform(0.3, 0.7)
                add(.rem, first)
                add(.awake, rng.uniform(30, 90))
                add(.rem, rem - first)
            } else {
                add(.rem, rem)
            }
            // Brief awakening at the end of a cycle, or the bathroom trip.
            if !tripDone && elapsed >= tripAfter {
                add(.awake, rng.uniform(40, 120))
                add(nil, rng.uniform(180, 480))
                add(.awake, rng.uniform(120, 360))
                tripDone = true
            } else if rng.chance(0.55) {
                add(.awake, rng.uniform(30, 180))
            }
            cycle += 1
        }

        // Lay the segments onto seconds, cut at `sleepEnd`, then the final awakening.
        var t = tIn
        let sleepEndSecond = tIn + Int(sleepEnd.rounded())
        for (stage, seconds) in segments {
            let end = min(t + Int(seconds.rounded()), sleepEndSecond)
            if end > t { for s in t..<end { stages[s] = stage } }
            t = max(t, end)
            if t >= sleepEndSecond { break }
        }
        if t < tOut { for s in t..<tOut { stages[s] = .awake } }

        // In-bed intervals are the runs of non-nil stages.
        var runStart: Int? = nil
        for s in 0..<duration {
            if stages[s] != nil { if runStart == nil { runStart = s } }
            else if let r = runStart { inBed.append((r, s)); runStart = nil }
        }
        if let r = runStart { inBed.append((r, duration)) }
    }
}
