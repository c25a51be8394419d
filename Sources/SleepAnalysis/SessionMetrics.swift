import SleepDomain

/// Nightly figures of one session, from its staged epochs.
///
/// Definitions (all in minutes unless noted; one epoch is 0.5 min):
/// - time in bed: the whole session, its first epoch start to its last epoch end (a short
///   trip out of bed inside a session counts as awake);
/// - unmeasured: minutes of the session without data (the pod's link was down), which have
///   no epoch and no stage; every figure below is over the measured minutes, so an outage
///   is neither sleep nor waking;
/// - sleep onset: the first epoch staged core, deep or REM; latency = minutes from the
///   session's start to it;
/// - final awakening: the end of the last sleep epoch;
/// - WASO: awake minutes between sleep onset and the final awakening;
/// - awakenings: runs of awake epochs between sleep onset and the final awakening;
/// - efficiency: total sleep / measured time in bed (0…1);
/// - stage shares: minutes of each stage / measured time in bed (the four sum to 1);
/// - mean heart rate, RMSSD and breathing rate: over the epochs asleep that have them.
package struct SessionMetrics: Sendable, Codable, Hashable {
    package var timeInBedMinutes: Double
    package var unmeasuredMinutes: Double
    package var totalSleepMinutes: Double
    package var sleepEfficiency: Double
    package var sleepOnsetLatencyMinutes: Double?
    package var wasoMinutes: Double
    package var awakenings: Int
    package var stageMinutes: StageMinutes
    package var stageShares: StageMinutes
    package var meanHeartRate: Double?
    package var meanRMSSD: Double?
    package var meanBreathingRate: Double?
    /// 0–100, see `SleepScore`.
    package var score: Int

    /// A session whose epochs tile it (no minute without data).
    package init(epochs: [Epoch]) {
        let start = epochs.first?.start ?? 0
        self.init(epochs: epochs, start: start, end: start + Double(epochs.count) * epochLength)
    }

    /// A session spanning `start`–`end` (Unix seconds), of which `epochs` were measured.
    package init(epochs: [Epoch], start: Double, end: Double) {
        let stages = epochs.map(\.stage)
        let half = epochLength / 60
        let measured = Double(stages.count) * half
        timeInBedMinutes = max(measured, (end - start) / 60)
        unmeasuredMinutes = timeInBedMinutes - measured
        var minutes = StageMinutes()
        for s in stages { minutes[s] += half }
        stageMinutes = minutes
        totalSleepMinutes = minutes.core + minutes.deep + minutes.rem
        sleepEfficiency = measured > 0 ? totalSleepMinutes / measured : 0
        var shares = StageMinutes()
        if measured > 0 { for s in SleepStage.allCases { shares[s] = minutes[s] / measured } }
        stageShares = shares

        let onset = stages.firstIndex { $0 != .awake }
        let last = stages.lastIndex { $0 != .awake }
        var waso = 0.0, runs = 0
        if let onset, let last {
            sleepOnsetLatencyMinutes = max(0, (epochs[onset].start - start) / 60)
            var inRun = false
            for s in stages[onset...last] {
                if s == .awake {
                    waso += half
                    if !inRun { runs += 1 }
                    inRun = true
                } else {
                    inRun = false
                }
            }
        } else {
            sleepOnsetLatencyMinutes = nil
        }
        wasoMinutes = waso
        awakenings = runs
        let asleep = epochs.filter { $0.stage != .awake }.map(\.features)
        meanHeartRate = mean(asleep.compactMap(\.heartRate))
        meanRMSSD = mean(asleep.compactMap(\.rmssd))
        meanBreathingRate = mean(asleep.compactMap(\.breathingRate))
        score = SleepScore.score(totalSleepMinutes: totalSleepMinutes, efficiency: sleepEfficiency,
                                 deepMinutes: minutes.deep, remMinutes: minutes.rem, wasoMinutes: waso)
    }
}

/// Minutes (or shares) per stage.
package struct StageMinutes: Sendable, Codable, Hashable {
    package var awake: Double = 0
    package var core: Double = 0
    package var deep: Double = 0
    package var rem: Double = 0

    package init(awake: Double = 0, core: Double = 0, deep: Double = 0, rem: Double = 0) {
        self.awake = awake; self.core = core; self.deep = deep; self.rem = rem
    }

    package subscript(stage: SleepStage) -> Double {
        get {
            switch stage {
            case .awake: awake
            case .core: core
            case .deep: deep
            case .rem: rem
            }
        }
        set {
            switch stage {
            case .awake: awake = newValue
            case .core: core = newValue
            case .deep: deep = newValue
            case .rem: rem = newValue
            }
        }
    }
}

/// The 0–100 sleep score.
///
///     score = round(100 × (0.35·D + 0.25·E + 0.15·N + 0.15·R + 0.10·C))
///     D = min(total sleep / 420 min, 1)            duration (7 h is full marks)
///     E = clamp((efficiency − 0.50) / 0.45, 0, 1)  efficiency (95 % is full marks)
///     N = min(deep / total sleep / 0.15, 1)        deep share of sleep (15 %)
///     R = min(REM / total sleep / 0.20, 1)         REM share of sleep (20 %)
///     C = max(0, 1 − WASO / 60 min)                continuity
///
/// Weights follow what sleep medicine values most (enough sleep, then consolidated
/// sleep, then its architecture); no sleep at all scores 0.
package enum SleepScore {
    package static func score(totalSleepMinutes tst: Double, efficiency: Double, deepMinutes: Double,
                             remMinutes: Double, wasoMinutes: Double) -> Int {
        guard tst > 0 else { return 0 }
        let d = min(tst / 420, 1)
        let e = min(max((efficiency - 0.5) / 0.45, 0), 1)
        let n = min(deepMinutes / tst / 0.15, 1)
        let r = min(remMinutes / tst / 0.20, 1)
        let c = max(0, 1 - wasoMinutes / 60)
        return Int((100 * (0.35 * d + 0.25 * e + 0.15 * n + 0.15 * r + 0.10 * c)).rounded())
    }
}
