import Foundation
import Testing
import SleepDomain

@Suite struct VocabularyTests {
    @Test func sideAndStageTextAndHealthValues() throws {
        #expect(BedSide.allCases.map(\.description) == ["left", "right"])
        #expect(BedSide.left < BedSide.right)
        #expect(SleepStage.allCases.map(\.healthValue) == [2, 3, 4, 5])
        #expect(SleepCategory.allCases.map(\.healthValue) == [0, 2, 3, 4, 5])
        #expect(SleepCategory.inBed.rawValue == "in_bed" && SleepCategory.inBed.stage == nil)
        for stage in SleepStage.allCases {
            #expect(SleepCategory(stage).stage == stage && SleepCategory(stage).rawValue == stage.rawValue)
        }
        #expect(StageProbabilities(awake: 0.1, core: 0.4, deep: 0.4, rem: 0.1).mostLikely == .core)
        #expect(StageProbabilities.certain(.rem)[.rem] == 1)
    }

    @Test func weekdayMaskIsThePodsByte() {
        #expect(WeekdayMask.mondayToFriday.rawValue == 0x1F)
        #expect(WeekdayMask(rawValue: 0xFF) == .everyDay)
        #expect(WeekdayMask.saturdayAndSunday.shifted(byDays: -1) == [.friday, .saturday])
        #expect(Weekday.sunday.advanced(by: 1) == .monday)
        #expect(Weekday(daysSinceEpoch: 0) == .thursday)
    }

    @Test func timeOfDayParsesWrapsAndRounds() {
        #expect(TimeOfDay("07:05")?.minuteOfDay == 425)
        #expect(TimeOfDay("7:05") == nil && TimeOfDay("24:00") == nil)
        #expect(TimeOfDay(wrapping: -10).description == "23:50")
        #expect(TimeOfDay("23:58")!.rounded(toStep: 5, rule: .nearest).description == "00:00")
    }

    @Test func splitMixReplaysItsReferenceSequence() {
        // Reference outputs of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        var rng = SplitMix64(seed: 0)
        #expect(rng.next() == 0xE220_A839_7B1D_CDAF)
        #expect(rng.next() == 0x6E78_9E6A_A1B9_65F4)
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42)
        #expect((0..<100).map { _ in a.uniform() } == (0..<100).map { _ in b.uniform() })
    }

    @Test func standardNormalQuantileInvertsTheCDF() {
        #expect(abs(StandardNormal.quantile(0.975) - 1.959964) < 1e-5)
        for p in stride(from: 0.001, to: 1, by: 0.013) {
            #expect(abs(StandardNormal.cdf(StandardNormal.quantile(p)) - p) < 1e-8)
        }
    }

    @Test func systemClockReadsNow() {
        let before = Date().timeIntervalSince1970
        let clock = SystemClock()
        let seconds = clock.unixSeconds(), micros = clock.unixMicros()
        #expect(Double(seconds) >= before.rounded(.down))
        #expect(Double(micros) / 1e6 >= before - 1e-3)
    }
}
