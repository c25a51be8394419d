import Foundation
import SleepAnalysis

/// The smart-wake decision for one side and one window, as a small state machine fed live
/// epochs: before the window they only build the night's heart-rate baseline; inside it the
/// first epoch that meets the rule (`SmartWakeRule`) is the moment to wake. Deep sleep, deep
/// sleep coming on and REM never qualify. When the window ends with no good moment, the pod's own alarm at the end is the
/// answer (`windowEnded`), which is also what happens when the hub is gone. Pure: no clock.
package struct SmartWakeDecider: Sendable {
    package let window: DateInterval
    package let rule: SmartWakeRule
    /// Set once; later observations change nothing.
    package private(set) var decision: WakeDecision?
    private var baselineSamples: [Double] = []
    private var baseline: Double?
    private var lightRun = 0
    /// P(deep) of the last `rule.deepRiseEpochs` + 1 window epochs in bed with stages.
    private var recentDeep: [Double] = []

    package init(window: DateInterval, rule: SmartWakeRule = SmartWakeRule()) {
        self.window = window
        self.rule = rule
    }

    /// The night's heart-rate baseline once the window has opened (nil before, or with too few epochs).
    package var heartRateBaseline: Double? { baseline }

    /// Feeds one epoch; returns the decision the first time one is made (nil otherwise).
    /// Epochs must come in time order; one at or after the window's end closes the window.
    package mutating func observe(_ o: WakeObservation) -> WakeDecision? {
        guard decision == nil else { return nil }
        if o.time <= window.start {  // the epoch lies before the window
            if o.present, let hr = o.heartRate, hr.isFinite { baselineSamples.append(hr) }
            return nil
        }
        if baseline == nil && baselineSamples.count >= rule.minimumBaselineEpochs {
            baseline = median(baselineSamples)
            baselineSamples = []
        }
        if o.time >= window.end { return windowEnded(last: o) }
        guard o.present, let p = o.probabilities else { lightRun = 0; recentDeep = []; return nil }
        let rise: Double? = baseline.flatMap { b in o.heartRate.map { $0 - b } }
        recentDeep.append(p.deep)
        if recentDeep.count > rule.deepRiseEpochs + 1 { recentDeep.removeFirst() }
        let deepening = recentDeep.count > rule.deepRiseEpochs && p.deep - recentDeep[0] >= rule.deepRise
        guard p.deep < rule.deepVeto, p.rem < rule.remVeto, !deepening else { lightRun = 0; return nil }
        lightRun = p.core >= rule.lightProbability ? lightRun + 1 : 0
        let reason: WakeReason?
        if p.awake >= rule.awakeProbability, let m = o.movement, m >= rule.movement {
            reason = .awakeMoving
        } else if lightRun >= rule.lightEpochs {
            reason = .lightSleep
        } else if p.core + p.awake >= rule.arousalProbability, let rise, rise >= rule.heartRateRise,
                  let m = o.movement, m >= rule.movement {
            reason = .arousal
        } else {
            reason = nil
        }
        guard let reason else { return nil }
        let stage = p.mostLikely
        let made = WakeDecision(time: o.time, reason: reason, stage: stage, stageProbability: p[stage],
                                movement: o.movement, heartRateRise: rise,
                                minutesBeforeEnd: window.end.timeIntervalSince(o.time) / 60)
        decision = made
        return made
    }

    /// The window closed with no good moment (or the hub has no signal): the alarm at the end,
    /// recorded with what `last` (the epoch at the end, if any) showed. Returns the existing
    /// decision if one was already made.
    package mutating func windowEnded(last: WakeObservation? = nil) -> WakeDecision {
        if let decision { return decision }
        let p = last?.present == true ? last?.probabilities : nil
        let stage = p?.mostLikely
        let rise: Double? = baseline.flatMap { b in last?.heartRate.map { $0 - b } }
        let made = WakeDecision(time: window.end, reason: .windowEnd, stage: stage, stageProbability: stage.flatMap { p?[$0] },
                                movement: last?.movement, heartRateRise: rise, minutesBeforeEnd: 0)
        decision = made
        return made
    }
}

private func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    let n = s.count
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
}
