import Foundation
import SleepDomain
import NightModel
import SleepAnalysis
import SmartWake

/// Smart wake on virtual-pod nights, without a pty: each NightModel night goes through the
/// signal front end; inside a 30-min window ending at a random moment of the last sleep
/// hours, every 30-s epoch is staged live (the analyzer on the data up to that moment,
/// forward-filtered, as the hub's preliminary stages are) and fed to `SmartWakeDecider`.
/// The model's true stage at the chosen moment is scored, beside the true stage at the
/// window's end (what a fixed alarm would wake from).
func runWakeBench(options: BenchOptions) throws {
    let nights = options.quick ? 4 : 72
    let hours = 8.0
    let windowMinutes = 30
    let firstSeed = options.wakeFirstSeed
    print("wake nights: \(nights) × \(fmtWake(hours, 0)) h one-sided NightModel nights (seeds \(firstSeed)…; the rule's thresholds were chosen on seeds 700–819), normal noise, \(windowMinutes)-min window ending 15–100 min before the final awakening; front end + forward-filtered stages, no pty")
    var dump = "seed,t,before_end_min,p_awake,p_core,p_deep,p_rem,movement,heart_rate,baseline,present,truth\n"
    let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)
    var smart: [SleepStage?] = [], fixed: [SleepStage?] = [], early: [Double] = []
    var reasons: [WakeReason: Int] = [:]
    var cpu = 0.0
    for k in 0..<nights {
        let seed = firstSeed + UInt64(k)
        var sleeper = SleeperProfile()
        sleeper.getsOutBeforeEnd = 600
        let config = NightConfig(seed: seed, duration: hours * 3600, sides: [SideConfig(sleeper: sleeper)], noise: .normal)
        let run = FrontEndNightRun(config: config, chunkFrames: 500)
        let truth = run.truth.sides[0]
        let base = FrontEndNightRun.epoch
        // The window's end: a second the sleeper is asleep in the last hours, on an epoch boundary.
        guard let lastSleep = truth.stage.lastIndex(where: { $0 != nil && $0 != .awake }) else { continue }
        let endSecond = lastSleep - (15 + Int((seed &* 2_654_435_761) % 86)) * 60
        let end = epochStart(containing: base + Double(endSecond))
        let window = DateInterval(start: Date(timeIntervalSince1970: end - Double(windowMinutes * 60)),
                                  end: Date(timeIntervalSince1970: end))
        var decider = SmartWakeDecider(window: window)
        let vitals = run.outputs[0].seconds, beats = run.outputs[0].beats
        let started = benchThreadCPU()
        // Before the window, one observation per epoch from a single forward pass stands in for the
        // live epochs (only the heart-rate baseline is taken from them).
        let before = analyzer.analyze(beats: beats.filter { $0 < window.start.timeIntervalSince1970 },
                                      vitals: vitals.filter { $0.time < window.start.timeIntervalSince1970 }, isFinal: false)
        for session in before { for epoch in session.epochs { _ = decider.observe(WakeObservation(epoch: epoch)) } }
        var decision: WakeDecision?
        var t = window.start.timeIntervalSince1970 + epochLength
        func trueStage(_ instant: Date) -> SleepStage? {
            let s = Int((instant.timeIntervalSince1970 - base).rounded(.down))
            return truth.stage.indices.contains(s) ? truth.stage[s] : nil
        }
        while (decision == nil || options.wakeDump != nil) && t <= end {
            let sessions = analyzer.analyze(beats: beats.filter { $0 < t }, vitals: vitals.filter { $0.time < t }, isFinal: false)
            if let last = sessions.last?.epochs.last, last.start + epochLength == t {
                let o = WakeObservation(epoch: last)
                if options.wakeDump != nil, let p = o.probabilities {
                    // The truth at the epoch's end: the moment an alarm then would find.
                    let truthThen = trueStage(o.time)?.rawValue ?? "out"
                    dump += "\(seed),\(Int(t)),\(fmtWake((end - t) / 60, 1)),\(p.awake),\(p.core),\(p.deep),\(p.rem),"
                        + "\(o.movement.map { "\($0)" } ?? ""),\(o.heartRate.map { "\($0)" } ?? ""),"
                        + "\(decider.heartRateBaseline.map { "\($0)" } ?? ""),\(o.present ? 1 : 0),\(truthThen)\n"
                }
                if decision == nil { decision = decider.observe(o) }
            } else if decision == nil {
                decision = decider.observe(WakeObservation(time: Date(timeIntervalSince1970: t), probabilities: nil,
                                                           movement: nil, heartRate: nil, present: false))
            }
            t += epochLength
        }
        let made = decision ?? decider.windowEnded()
        cpu += benchThreadCPU() - started
        smart.append(trueStage(made.time))
        fixed.append(trueStage(window.end))
        early.append(made.minutesBeforeEnd)
        reasons[made.reason, default: 0] += 1
        print("wake.night.seed\(seed): \(made.reason.rawValue) \(fmtWake(made.minutesBeforeEnd, 1)) min early, truth \(smart.last!?.rawValue ?? "out") (fixed alarm: \(fixed.last!?.rawValue ?? "out"))")
    }
    func share(_ stages: [SleepStage?], _ keep: (SleepStage?) -> Bool) -> String {
        fmtWake(100 * Double(stages.filter(keep).count) / Double(max(stages.count, 1)), 1)
    }
    let lightOrAwake: (SleepStage?) -> Bool = { $0 == .core || $0 == .awake }
    print("wake.smart.light_or_awake: \(share(smart, lightOrAwake)) % of \(smart.count) wakes (truth's stage at the moment; goal ≥ 80 %)")
    print("wake.smart.deep: \(share(smart) { $0 == .deep }) % (goal < 5 %)")
    print("wake.smart.rem: \(share(smart) { $0 == .rem }) %")
    print("wake.smart.minutes_before_end: \(fmtWake(early.reduce(0, +) / Double(max(early.count, 1)), 1)) min (mean)")
    print("wake.smart.reasons: " + WakeReason.allCases.map { "\($0.rawValue) \(reasons[$0, default: 0])" }.joined(separator: ", "))
    print("wake.fixed.light_or_awake: \(share(fixed, lightOrAwake)) % (alarm at the window's end)")
    print("wake.fixed.deep: \(share(fixed) { $0 == .deep }) %")
    print("wake.fixed.rem: \(share(fixed) { $0 == .rem }) %")
    print("wake.fixed.minutes_before_end: 0.0 min")
    if let path = options.wakeDump {
        try dump.write(toFile: path, atomically: true, encoding: .utf8)
        print("wake.dump: \(path)")
    }
    print("wake.decision_cpu: \(fmtWake(cpu / Double(max(nights, 1)), 2)) s per night (re-staging the night at every window epoch, CPU time)")
}

private func benchThreadCPU() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

private func fmtWake(_ v: Double, _ decimals: Int = 2) -> String { String(format: "%.\(decimals)f", v) }
