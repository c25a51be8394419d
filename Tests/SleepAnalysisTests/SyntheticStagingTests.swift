import Foundation
import NightModel
import SleepDomain
import SyntheticNights
import Testing
@testable import SleepAnalysis

/// The shipped stager on synthetic nights from two unrelated generators, through the real
/// front end (raw piezo → beats and per-second vitals → stages): NightModel (the virtual
/// pod's physiology) and `TextbookNight` (textbook physiology, other shapes and noise).
/// Neither was used to fit the model. Targets: total sleep within ±30 min per night, deep and
/// REM recall above 0.5 — met on the textbook nights tested here and on NightModel seeds 31,
/// 32 and 33 (seed 34 misses the total-sleep target: docs/staging.md). Each night's
/// breathing and, on these nights with beats and movement, its movement are learnt from the
/// night (`NightBreathing`, `NightMovement`); without them the stager misses most of
/// NightModel's short awakenings.
@Suite struct SyntheticStagingTests {
    static func describe(_ e: StagingEvaluation, _ name: String) -> String {
        let line = String(format: "%@: k4 %.3f k2 %.3f TST bias %+.1f min recall a/c/d/r %.2f/%.2f/%.2f/%.2f",
                          name, e.kappa(.four), e.kappa(.two), e.totalSleepBiasMinutes,
                          e.recall(.awake), e.recall(.core), e.recall(.deep), e.recall(.rem))
        print(line)
        return line
    }

    /// A textbook night of `pattern` staged as shipped, and its figures with the night's true
    /// and staged share awake.
    static func stagePattern(_ pattern: TextbookNight.Pattern, seed: UInt64, restingHeartRate: Double,
                             breathingRate: Double) -> (StagingEvaluation, String) {
        let night = SyntheticNight.textbook(seed: seed, restingHeartRate: restingHeartRate,
                                            breathingRate: breathingRate, pattern: pattern)
        let e = night.evaluate(SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!))
        return (e, describe(e, "textbook \(pattern.rawValue) seed \(seed)")
            + String(format: " awake share %.2f staged %.2f", e.referenceAwakeShare, e.stagedAwakeShare))
    }

    @Test(arguments: [UInt64(3), 4])
    func textbookNight(seed: UInt64) throws {
        let night = SyntheticNight.textbook(seed: seed, restingHeartRate: seed == 3 ? 64 : 52, breathingRate: seed == 3 ? 15 : 12)
        let e = night.evaluate(SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!))
        let line = Self.describe(e, "textbook seed \(seed)")
        #expect(abs(e.totalSleepBiasMinutes) <= 30, "\(line)")
        #expect(e.recall(.deep) > 0.5, "\(line)")
        #expect(e.recall(.rem) > 0.5, "\(line)")
    }

    /// A night on which learning the movement from the fitted model without it (the first EM
    /// start) took the REM periods, whose breathing lifts the movement index, for waking: TST
    /// −63.5 min, REM recall 0.29. Started from the fitted model whole as well, the night keeps
    /// the likelier fit, which finds its REM (release bench: −5.0 min, REM recall 0.95).
    @Test func textbookNightWhoseREMLooksLikeWakingToTheFirstStart() throws {
        let night = SyntheticNight.textbook(seed: 10, restingHeartRate: 72, breathingRate: 17)
        let e = night.evaluate(SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!))
        let line = Self.describe(e, "textbook seed 10")
        #expect(abs(e.totalSleepBiasMinutes) <= 30, "\(line)")
        #expect(e.recall(.rem) > 0.5, "\(line)")
    }

    /// An older sleeper's night (`TextbookNight.Pattern.fragmented`): a quarter of it awake,
    /// in eleven awakenings, three times the typical night's share. A stager that imposed the
    /// labelled nights' stage mix would sleep through most of them; the shipped one stages
    /// the night's own share (release bench: 0.25 awake, 0.24 staged, TST +3.5 min).
    @Test func aNightAQuarterAwakeIsStagedWithItsOwnWakeShare() throws {
        let (e, line) = Self.stagePattern(.fragmented, seed: 3, restingHeartRate: 64, breathingRate: 15)
        #expect(e.referenceAwakeShare > 0.2, "\(line)")
        #expect(abs(e.stagedAwakeShare - e.referenceAwakeShare) < 0.05, "\(line)")
        #expect(abs(e.totalSleepBiasMinutes) <= 30, "\(line)")
        #expect(e.recall(.deep) > 0.5, "\(line)")
        #expect(e.recall(.rem) > 0.5, "\(line)")
    }

    /// A sound sleeper's night (`TextbookNight.Pattern.sound`: 2 % awake). Its REM breathes
    /// as irregularly as waking, and EM started without movement gave the REM periods to
    /// "awake" and fitted the breathing tighter for it, so the whole likelihood preferred that
    /// start (−77.5 min, REM recall 0.29). Compared by what the labelled nights anchor (the
    /// fitted emissions and the movement), the night keeps the other start (release bench:
    /// −3.5 min, REM recall 0.95).
    @Test func aSoundSleepersREMIsNotTakenForWaking() throws {
        let (e, line) = Self.stagePattern(.sound, seed: 5, restingHeartRate: 72, breathingRate: 17)
        #expect(abs(e.totalSleepBiasMinutes) <= 30, "\(line)")
        #expect(e.recall(.rem) > 0.5, "\(line)")
        #expect(e.stagedAwakeShare < 0.08, "\(line)")
    }

    @Test(arguments: [UInt64(31), 32, 33])
    func nightModelNight(seed: UInt64) throws {
        let e = SyntheticNight.nightModel(seed: seed).evaluate(SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!))
        let line = Self.describe(e, "NightModel seed \(seed)")
        // Measured: seed 31 TST bias −13.0 min, seed 32 +7.0, seed 33 −8.5 (release bench, docs/staging.md).
        #expect(abs(e.totalSleepBiasMinutes) <= 30, "\(line)")
        #expect(e.recall(.deep) > 0.5, "\(line)")
        #expect(e.recall(.rem) > 0.5, "\(line)")
    }

    /// What the night's own breathing adds: the same night staged without it finds fewer of
    /// its awakenings (measured: wake recall 0.55 against 0.66, TST bias +2.0 against −13.0
    /// min; the night's movement, learnt either way, finds the rest).
    @Test func breathingFindsNightModelsAwakenings() throws {
        let night = SyntheticNight.nightModel(seed: 31)
        let utc = TimeZone(identifier: "UTC")!
        let with = night.evaluate(SleepAnalyzer(timeZone: utc))
        let without = night.evaluate(SleepAnalyzer(timeZone: utc, learnsBreathing: false))
        let lines = Self.describe(with, "with breathing") + "; " + Self.describe(without, "without")
        #expect(with.recall(.awake) > without.recall(.awake) + 0.1, "\(lines)")
        #expect(with.totalSleepBiasMinutes < without.totalSleepBiasMinutes - 10, "\(lines)")
    }
}
