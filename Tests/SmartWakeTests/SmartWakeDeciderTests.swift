import Foundation
import SleepDomain
import Testing
import SleepAnalysis
import SleepSchedule
@testable import SmartWake

/// Builds a night of 30-s epochs: `before` epochs of baseline sleep, then the given epochs
/// inside the window (which opens at `start`).
struct EpochScript {
    static let start = utc(2026, 1, 15, 11, 30)
    static let window = DateInterval(start: start, duration: 30 * 60)
    static let baselineHR = 56.0

    static func baseline(_ count: Int = 40) -> [WakeObservation] {
        (0..<count).map { i in
            WakeObservation(time: start.addingTimeInterval(-Double(count - i) * 30), probabilities: p(core: 1),
                            movement: 0, heartRate: baselineHR + (i % 2 == 0 ? 1 : -1), present: true)
        }
    }

    /// The i-th epoch inside the window (ends 30 s × (i + 1) after it opens).
    static func at(_ i: Int, _ probabilities: StageProbabilities?, movement: Double? = 0, hr: Double? = baselineHR,
                   present: Bool = true) -> WakeObservation {
        WakeObservation(time: start.addingTimeInterval(Double(i + 1) * 30), probabilities: probabilities,
                        movement: movement, heartRate: hr, present: present)
    }
}

func p(awake: Double = 0, core: Double = 0, deep: Double = 0, rem: Double = 0) -> StageProbabilities {
    StageProbabilities(awake: awake, core: core, deep: deep, rem: rem)
}

/// Feeds every observation; returns the decision and the index of the epoch that made it
/// early (nil when the alarm fired at the window's end).
func run(_ decider: inout SmartWakeDecider, _ window: [WakeObservation]) -> (WakeDecision, Int?) {
    for o in EpochScript.baseline() {
        let early = decider.observe(o)
        #expect(early == nil, "no decision before the window opens")
    }
    for (i, o) in window.enumerated() {
        if let d = decider.observe(o) { return (d, d.reason == .windowEnd ? nil : i) }
    }
    return (decider.windowEnded(), nil)
}

extension SmartWakeRule {
    /// The thresholds chosen on the previous staging model: round numbers whose mechanics
    /// (runs, vetoes, reasons) the tests below spell out.
    static var previousStager: SmartWakeRule {
        var r = SmartWakeRule()
        r.lightProbability = 0.7
        r.lightEpochs = 3
        r.awakeProbability = 0.5
        r.movement = 1.0
        r.arousalProbability = 0.6
        r.heartRateRise = 6
        r.deepVeto = 0.25
        r.remVeto = 0.15
        return r
    }
}

@Suite struct SmartWakeDeciderTests {
    @Test func theDefaultRuleWaitsForThreeEpochsOfLightSleepOutsideREMAndDeep() throws {
        // REM-sure with a twitch (vetoed), then a mix with some deep in it (vetoed), then light
        // sleep at P(core) 0.55 from epoch 20: the third such epoch wakes.
        var d = SmartWakeDecider(window: EpochScript.window)
        let epochs = (0..<10).map { EpochScript.at($0, p(awake: 0.05, core: 0.03, rem: 0.92), movement: 0.5) }
            + (10..<20).map { EpochScript.at($0, p(core: 0.84, deep: 0.06, rem: 0.1)) }
            + (20..<60).map { EpochScript.at($0, p(awake: 0.05, core: 0.55, rem: 0.4)) }
        let (decision, index) = run(&d, epochs)
        #expect(index == 22)
        #expect(decision.reason == .lightSleep)
        // Two light epochs, then one below the threshold, again and again: never three in a row.
        var e = SmartWakeDecider(window: EpochScript.window)
        let broken = (0..<60).map { EpochScript.at($0, $0 % 3 == 2 ? p(core: 0.45, rem: 0.55) : p(core: 0.7, rem: 0.3)) }
        #expect(run(&e, broken).0.reason == .windowEnd)
        // Awake with movement wakes at once; awake and still does not.
        var f = SmartWakeDecider(window: EpochScript.window)
        #expect(run(&f, [EpochScript.at(0, p(awake: 0.55, core: 0.2, rem: 0.25), movement: 1.0)]).1 == 0)
        var g = SmartWakeDecider(window: EpochScript.window)
        let still = (0..<60).map { EpochScript.at($0, p(awake: 0.6, rem: 0.4), movement: 0.5) }
        #expect(run(&g, still).0.reason == .windowEnd)
    }

    @Test func deepSleepComingOnVetoesLightSleep() throws {
        // Light sleep by every threshold, but P(deep) creeps up (0.004 an epoch, under the deep
        // veto): the sleeper is going down. No wake until it stops climbing; then the third
        // light epoch after that wakes.
        var d = SmartWakeDecider(window: EpochScript.window)
        let deepening = (0..<10).map { EpochScript.at($0, p(core: 0.97 - 0.004 * Double($0), deep: 0.005 + 0.004 * Double($0), rem: 0.025)) }
        let steady = (10..<60).map { EpochScript.at($0, p(core: 0.935, deep: 0.04, rem: 0.025)) }
        let (decision, index) = run(&d, deepening + steady)
        // Epoch 10 is still 0.003 over epoch 8; 11, 12 and 13 are not.
        #expect(index == 13)
        #expect(decision.reason == .lightSleep)
        // The same light sleep with P(deep) flat wakes at its third epoch.
        var flat = SmartWakeDecider(window: EpochScript.window)
        #expect(run(&flat, (0..<60).map { EpochScript.at($0, p(core: 0.95, deep: 0.025, rem: 0.025)) }).1 == 2)
        // A rise smaller than the rule's does not count.
        var slow = SmartWakeDecider(window: EpochScript.window)
        let creeping = (0..<60).map { EpochScript.at($0, p(core: 0.97, deep: 0.005 + 0.0009 * Double($0), rem: 0.025)) }
        #expect(run(&slow, creeping).1 == 2)
    }

    @Test func confidentLightSleepForThreeEpochsWakes() throws {
        var d = SmartWakeDecider(window: EpochScript.window, rule: .previousStager)
        // Deep, then light with too much REM in it (vetoed), then confident light from epoch 12.
        let epochs = (0..<10).map { EpochScript.at($0, p(deep: 0.9, rem: 0.1)) }
            + [EpochScript.at(10, p(core: 0.8, rem: 0.2)), EpochScript.at(11, p(core: 0.75, deep: 0.05, rem: 0.2))]
            + (12..<60).map { EpochScript.at($0, p(awake: 0.05, core: 0.85, rem: 0.1)) }
        let (decision, index) = run(&d, epochs)
        #expect(index == 14)
        #expect(decision.reason == .lightSleep)
        #expect(decision.stage == .core)
        #expect(decision.time == EpochScript.start.addingTimeInterval(15 * 30))
        #expect(abs(decision.minutesBeforeEnd - 22.5) < 1e-9)
        #expect(d.decision == decision)
        let again = d.observe(EpochScript.at(20, p(awake: 1), movement: 5))
        #expect(again == nil, "decided once")
    }

    @Test func oneStrayLightEpochIsNotEnough() {
        var d = SmartWakeDecider(window: EpochScript.window, rule: .previousStager)
        let epochs = (0..<60).map { i in EpochScript.at(i, i % 3 == 2 ? p(core: 0.2, deep: 0.8) : p(core: 0.9, rem: 0.1)) }
        let (decision, index) = run(&d, epochs)
        #expect(index == nil)
        #expect(decision.reason == .windowEnd)
        #expect(decision.time == EpochScript.window.end)
    }

    @Test func deepSleepThroughoutFiresAtTheEndEvenWithMovementAndHeartRateRise() {
        var d = SmartWakeDecider(window: EpochScript.window, rule: .previousStager)
        let epochs = (0..<60).map { EpochScript.at($0, p(awake: 0.3, core: 0.3, deep: 0.4), movement: 4, hr: 70) }
        let (decision, index) = run(&d, epochs)
        #expect(index == nil)
        #expect(decision.reason == .windowEnd)
        #expect(decision.minutesBeforeEnd == 0)
    }

    @Test func awakeNeedsMovement() {
        var still = SmartWakeDecider(window: EpochScript.window, rule: .previousStager)
        let quiet = (0..<60).map { EpochScript.at($0, p(awake: 0.7, core: 0.3), movement: 0) }
        let (stillDecision, _) = run(&still, quiet)
        #expect(stillDecision.reason == .windowEnd)

        var moving = SmartWakeDecider(window: EpochScript.window, rule: .previousStager)
        let epochs = (0..<5).map { EpochScript.at($0, p(awake: 0.7, core: 0.3), movement: 0) }
            + [EpochScript.at(5, p(awake: 0.7, core: 0.3), movement: 1.5)]
        let (decision, index) = run(&moving, epochs)
        #expect(index == 5)
        #expect(decision.reason == .awakeMoving)
        #expect(decision.movement == 1.5)
    }

    @Test func heartRateRiseOverTheNightsBaselineIsAnArousal() throws {
        var d = SmartWakeDecider(window: EpochScript.window, rule: .previousStager)
        // Between light and awake, neither confident; at epoch 7 a movement with the heart
        // 6 bpm above the baseline.
        let epochs = (0..<7).map { EpochScript.at($0, p(awake: 0.45, core: 0.45, rem: 0.1)) }
            + [EpochScript.at(7, p(awake: 0.4, core: 0.5, rem: 0.1), movement: 1.2, hr: EpochScript.baselineHR + 6)]
        let (decision, index) = run(&d, epochs)
        #expect(index == 7)
        #expect(decision.reason == .arousal)
        #expect(abs(try #require(decision.heartRateRise) - 6) < 1e-9)
        #expect(d.heartRateBaseline == EpochScript.baselineHR)
    }

    @Test func noSignalOrEmptyBedNeverWakesEarly() {
        var d = SmartWakeDecider(window: EpochScript.window, rule: .previousStager)
        let epochs = (0..<30).map { EpochScript.at($0, nil, movement: nil, hr: nil) }
            + (30..<60).map { EpochScript.at($0, p(core: 1), present: false) }
        let (decision, index) = run(&d, epochs)
        #expect(index == nil)
        #expect(decision.reason == .windowEnd)
        #expect(decision.stage == nil)
    }

    @Test func anEpochAtTheEndClosesTheWindowWithWhatItShowed() throws {
        var e = SmartWakeDecider(window: EpochScript.window, rule: .previousStager)
        for o in EpochScript.baseline() { _ = e.observe(o) }
        for i in 0..<59 {
            let inside = e.observe(EpochScript.at(i, p(deep: 1)))
            #expect(inside == nil)
        }
        let closed = e.observe(EpochScript.at(59, p(core: 0.1, deep: 0.9)))
        let closing = try #require(closed)
        #expect(closing.reason == .windowEnd)
        #expect(closing.stage == .deep)
        #expect(closing.time == EpochScript.window.end)
    }

    @Test func springForwardWindowDecidesOnlyInsideItsRealInterval() throws {
        // 02:40–03:10 New York on 2026-03-08 is 03:00–03:10 EDT: light sleep from 01:00 EST on is
        // ignored until the window really opens at the transition (07:00 UTC).
        let window = WakeWindow(end: TimeOfDay("03:10")!, minutes: 30)!.interval(endingOn: day(2026, 3, 8), in: newYork)
        var d = SmartWakeDecider(window: window, rule: .previousStager)
        var now = utc(2026, 3, 8, 6, 0)
        var decided: WakeDecision?
        while now < window.end, decided == nil {
            now = now.addingTimeInterval(30)
            decided = d.observe(WakeObservation(time: now, probabilities: p(core: 1), movement: 0, heartRate: 55, present: true))
        }
        // Light sleep all along: the third epoch inside the window, 03:01:30 EDT.
        let decision = try #require(decided)
        #expect(decision.time == utc(2026, 3, 8, 7, 1).addingTimeInterval(30))
        #expect(decision.reason == .lightSleep)
        #expect(LocalDateTime(decision.time, in: newYork).timeOfDay == TimeOfDay("03:01")!)
    }

    @Test func fallBackDeepNightFiresAtTheFirstOccurrenceOfTheEnd() {
        let window = WakeWindow(end: TimeOfDay("01:45")!, minutes: 30)!.interval(endingOn: day(2026, 11, 1), in: newYork)
        var d = SmartWakeDecider(window: window, rule: .previousStager)
        var now = window.start.addingTimeInterval(-3600)
        while now < window.end.addingTimeInterval(-1) {
            now = now.addingTimeInterval(30)
            _ = d.observe(WakeObservation(time: now, probabilities: p(deep: 1), movement: 0, heartRate: 50, present: true))
        }
        let decision = d.windowEnded()
        #expect(decision.reason == .windowEnd)
        #expect(decision.time == utc(2026, 11, 1, 5, 45))
    }

    @Test func summaryNamesTheMomentAndTheReason() {
        let decision = WakeDecision(time: utc(2026, 1, 15, 11, 41), reason: .lightSleep, stage: .core,
                                    stageProbability: 0.82, movement: 0.4, heartRateRise: 3, minutesBeforeEnd: 19)
        #expect(decision.summary(in: newYork) == "06:41:00 light_sleep (core 0.82, movement 0.40, +3.0 bpm), 19.0 min before the window's end")
    }
}
