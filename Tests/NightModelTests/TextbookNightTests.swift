import NightModel
import SleepDomain
import Testing

/// The textbook generator's night patterns are what their doc comments say, and the
/// typical night (every figure before the patterns) is the night it always was.
@Suite struct TextbookNightTests {
    /// Runs of one stage: (stage, first epoch, length).
    static func runs(_ stages: [SleepStage]) -> [(stage: SleepStage, start: Int, count: Int)] {
        var out: [(stage: SleepStage, start: Int, count: Int)] = []
        for (i, s) in stages.enumerated() {
            if let last = out.last, last.stage == s { out[out.count - 1].count += 1 } else { out.append((s, i, 1)) }
        }
        return out
    }

    static func share(_ stage: SleepStage, _ night: TextbookNight) -> Double {
        Double(night.stages.filter { $0 == stage }.count) / Double(night.stages.count)
    }

    @Test func theTypicalNightIsTheOneEveryEarlierFigureWasMeasuredOn() {
        let night = TextbookNight(seed: 3)
        // Seed 3's stage counts (awake, core, deep, REM epochs): the bench stages seeds 3–6 of
        // this pattern to the figures docs/staging.md gave before the patterns existed.
        let counts = SleepStage.allCases.map { s in night.stages.filter { $0 == s }.count }
        #expect(counts == [52, 348, 154, 196], "\(counts)")
        #expect(night.lyingStill.allSatisfy { !$0 })
        #expect(TextbookNight(seed: 3, pattern: .typical).stages == night.stages)
    }

    @Test(arguments: [UInt64(3), 4, 5, 6])
    func soundSleeperWakesOnlyAtTheEnds(seed: UInt64) {
        let night = TextbookNight(seed: seed, pattern: .sound)
        let runs = Self.runs(night.stages)
        #expect(Self.share(.awake, night) < 0.04)
        #expect(runs.filter { $0.stage == .awake }.count == 2, "awake only before sleep onset and at the end")
        #expect(Self.share(.deep, night) > Self.share(.deep, TextbookNight(seed: seed)))
    }

    @Test(arguments: [UInt64(3), 4, 5, 6])
    func olderSleeperWakesOftenAndSleepsLessDeeply(seed: UInt64) {
        let night = TextbookNight(seed: seed, pattern: .fragmented)
        let awake = Self.share(.awake, night)
        #expect(awake > 0.15 && awake < 0.30, "awake share \(awake)")
        #expect(Self.runs(night.stages).filter { $0.stage == .awake }.count >= 10)
        #expect(Self.share(.deep, night) < Self.share(.deep, TextbookNight(seed: seed)) / 2)
    }

    @Test(arguments: [UInt64(3), 4, 5, 6])
    func insomniacLiesAwakeAndStillInTheMiddleOfTheNight(seed: UInt64) {
        let night = TextbookNight(seed: seed, pattern: .insomnia)
        let runs = Self.runs(night.stages)
        let onset = runs[0]
        #expect(onset.stage == .awake && onset.count >= 60, "sleep onset \(onset.count / 2) min")
        let long = runs.dropFirst().dropLast().filter { $0.stage == .awake && $0.count >= 120 }
        #expect(long.count == 1, "one waking of an hour or more inside the night")
        if let w = long.first {
            let still = night.lyingStill.indices.filter { night.lyingStill[$0] }
            #expect(still == Array(w.start..<(w.start + w.count)), "only that waking is lying still")
            #expect(Double(w.start) / Double(night.stages.count) > 0.2 && Double(w.start) / Double(night.stages.count) < 0.6)
        }
        let awake = Self.share(.awake, night)
        #expect(awake > 0.2 && awake < 0.35, "awake share \(awake)")
    }
}
