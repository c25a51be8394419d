import Foundation
import SleepDomain

/// The sleeper's night as stage segments: get in, lie awake (sleep-onset latency), then
/// ~90-minute cycles with deep sleep shrinking and REM growing across the night, brief
/// awakenings mostly at cycle ends, an optional bathroom trip, and a final awakening.
struct Hypnogram: Sendable {
    /// Per second: the stage, or nil when the sleeper is out of bed.
    var stages: [SleepStage?]
    /// In-bed intervals in seconds (start inclusive, end exclusive).
    var inBed: [(start: Int, end: Int)]

    init(duration: Int, profile: SleeperProfile, rng: inout SplitMix64) {
        stages = [SleepStage?](repeating: nil, count: duration)
        inBed = []
        guard duration > 0 else { return }
        let d = Double(duration)
        let getIn = min(profile.getsIn ?? rng.uniform(180, 600), d * 0.1)
        let outBefore = min(profile.getsOutBeforeEnd ?? rng.uniform(180, 600), d * 0.1)
        let tIn = Int(getIn.rounded()), tOut = max(tIn, duration - Int(outBefore.rounded()))
        guard tOut > tIn else { return }

        // Stage segments in seconds, from getting in to getting out.
        var segments: [(SleepStage?, Double)] = []
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
        func add(_ stage: SleepStage?, _ seconds: Double) {
            guard seconds > 0 else { return }
            segments.append((stage, seconds))
            elapsed += seconds
        }
        // A stage period is not one block: brief awakenings interrupt light sleep and
        // REM, deep sleep lightens to core for a minute or two, REM drops to core. Gaps
        // between interruptions are exponential (means below), so stage runs last minutes
        // rather than whole cycle segments (slpdb-dev: mean runs 3.5–4.5 min per stage).
        func addFragmented(_ stage: SleepStage, _ seconds: Double) {
            var left = seconds
            let meanGap: Double
            switch stage {
            case .core: meanGap = 9 * 60
            case .deep: meanGap = 7 * 60
            case .rem: meanGap = 6 * 60
            case .awake: meanGap = .infinity
            }
            while left > 0 {
                let gap = meanGap.isFinite ? -meanGap * log(max(rng.uniform(), 1e-9)) : left
                if gap >= left { add(stage, left); return }
                add(stage, gap)
                // The interruption takes its time out of the period, so cycles keep their length.
                let (other, length): (SleepStage, Double)
                switch stage {
                case .core: (other, length) = (.awake, rng.uniform(30, 300))
                case .deep: (other, length) = (.core, rng.uniform(60, 180))
                case .rem: (other, length) = rng.chance(0.5) ? (.awake, rng.uniform(30, 180)) : (.core, rng.uniform(60, 150))
                case .awake: (other, length) = (.awake, 0)
                }
                let taken = min(length, left - gap)
                add(other, taken)
                left -= gap + taken
            }
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
            // Light sleep, deep, light again, REM; each broken up as real nights are.
            addFragmented(.core, coreA)
            addFragmented(.deep, deep)
            addFragmented(.core, coreB)
            addFragmented(.rem, rem)
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

        // A trip out of bed at a set moment, laid over the drawn night (so the draws, and
        // every other night, stay as they were).
        if let at = profile.leavesBedAt {
            let out = Int(at.rounded()), from = max(tIn, out - 60), to = min(tOut, out + 360)
            if from < to { for s in from..<to { stages[s] = s < out || s >= out + 300 ? .awake : nil } }
        }

        // In-bed intervals are the runs of non-nil stages.
        var runStart: Int? = nil
        for s in 0..<duration {
            if stages[s] != nil { if runStart == nil { runStart = s } }
            else if let r = runStart { inBed.append((r, s)); runStart = nil }
        }
        if let r = runStart { inBed.append((r, duration)) }
    }
}
