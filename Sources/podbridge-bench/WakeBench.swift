import Dispatch
import Foundation
import SleepDomain
import NightModel
import SleepAnalysis
import SmartWake
import Synchronization

/// Smart wake on virtual-pod nights, without a pty: each NightModel night goes through the
/// signal front end; inside a 30-min window ending at a random moment of the last sleep
/// hours, every 30-s epoch is staged live (the analyzer on the data up to that moment,
/// forward-filtered, as the hub's preliminary stages are) and fed to `SmartWakeDecider`.
/// The model's true stage at the chosen moment is scored, beside the true stage at the
/// window's end (what a fixed alarm would wake from).
func runWakeBench(options: BenchOptions) throws {
    let nights = options.quick ? 4 : 360
    let hours = 8.0
    let windowMinutes = 30
    let firstSeed = options.wakeFirstSeed
    print("wake nights: \(nights) × \(fmtWake(hours, 0)) h one-sided NightModel nights (seeds \(firstSeed)–\(firstSeed + UInt64(nights) - 1); the rule's thresholds were chosen on seeds 700–819), normal noise, \(windowMinutes)-min window ending 15–100 min before the final awakening; front end + forward-filtered stages, no pty")
    // Nights are independent: run them on every core, report them in seed order.
    let results = Mutex<[WakeNight?]>(Array(repeating: nil, count: nights))
    DispatchQueue.concurrentPerform(iterations: nights) { k in
        let night = WakeNight(seed: firstSeed + UInt64(k), hours: hours, windowMinutes: windowMinutes,
                              dumping: options.wakeDump != nil)
        results.withLock { $0[k] = night }
    }
    let all = results.withLock { $0.compactMap { $0 } }
    for n in all {
        print("wake.night.seed\(n.seed): \(n.decision.reason.rawValue) \(fmtWake(n.decision.minutesBeforeEnd, 1)) min early, truth \(n.smart?.rawValue ?? "out") (fixed alarm: \(n.fixed?.rawValue ?? "out"))")
    }
    let smart = all.map(\.smart), fixed = all.map(\.fixed)
    func fraction(_ stages: [SleepStage?], _ keep: (SleepStage?) -> Bool) -> Double {
        Double(stages.filter(keep).count) / Double(max(stages.count, 1))
    }
    func share(_ stages: [SleepStage?], _ keep: (SleepStage?) -> Bool) -> String {
        fmtWake(100 * fraction(stages, keep), 1)
    }
    /// Wilson 95 % interval of a share, in percent: how far the figure could be from the
    /// rate itself on this many nights.
    func interval(_ stages: [SleepStage?], _ keep: (SleepStage?) -> Bool) -> String {
        let n = Double(max(stages.count, 1)), p = fraction(stages, keep), z = 1.96
        let centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        let half = z * ((p * (1 - p) / n + z * z / (4 * n * n)).squareRoot()) / (1 + z * z / n)
        return "95 % interval \(fmtWake(100 * max(0, centre - half), 1))–\(fmtWake(100 * min(1, centre + half), 1)) %"
    }
    let lightOrAwake: (SleepStage?) -> Bool = { $0 == .core || $0 == .awake }
    let isDeep: (SleepStage?) -> Bool = { $0 == .deep }
    var reasons: [WakeReason: Int] = [:]
    for n in all { reasons[n.decision.reason, default: 0] += 1 }
    print("wake.smart.light_or_awake: \(share(smart, lightOrAwake)) % of \(smart.count) wakes (truth's stage at the moment; goal ≥ 80 %; \(interval(smart, lightOrAwake)))")
    print("wake.smart.deep: \(share(smart, isDeep)) % (goal < 5 %; \(interval(smart, isDeep)))")
    print("wake.smart.rem: \(share(smart) { $0 == .rem }) %")
    print("wake.smart.minutes_before_end: \(fmtWake(all.map(\.decision.minutesBeforeEnd).reduce(0, +) / Double(max(all.count, 1)), 1)) min (mean)")
    print("wake.smart.reasons: " + WakeReason.allCases.map { "\($0.rawValue) \(reasons[$0, default: 0])" }.joined(separator: ", "))
    print("wake.fixed.light_or_awake: \(share(fixed, lightOrAwake)) % (alarm at the window's end; \(interval(fixed, lightOrAwake)))")
    print("wake.fixed.deep: \(share(fixed, isDeep)) % (\(interval(fixed, isDeep)))")
    print("wake.fixed.rem: \(share(fixed) { $0 == .rem }) %")
    print("wake.fixed.minutes_before_end: 0.0 min")
    // The spread between blocks of 72 nights (the bench's size before): what one such draw shows.
    if all.count >= 144 {
        let blocks = stride(from: 0, to: all.count - 71, by: 72).map { Array(all[$0..<($0 + 72)]) }
        print("wake.smart.by_72_nights: " + blocks.map { b in
            "seeds \(b[0].seed)–\(b[71].seed) \(share(b.map(\.smart), lightOrAwake)) % light or awake, \(share(b.map(\.smart), isDeep)) % deep"
        }.joined(separator: "; "))
    }
    if let path = options.wakeDump {
        let dump = "seed,t,before_end_min,p_awake,p_core,p_deep,p_rem,movement,heart_rate,baseline,present,truth\n"
            + all.map(\.dump).joined()
        try dump.write(toFile: path, atomically: true, encoding: .utf8)
        print("wake.dump: \(path)")
    }
    print("wake.decision_cpu: \(fmtWake(all.map(\.cpuSeconds).reduce(0, +) / Double(max(all.count, 1)), 2)) s per night (re-staging the night at every window epoch, CPU time)")
}

/// One wake-bench night: the smart decision, the truth at it and at the window's end.
private struct WakeNight: Sendable {
    let seed: UInt64
    let decision: WakeDecision
    let smart: SleepStage?
    let fixed: SleepStage?
    let cpuSeconds: Double
    /// Every window epoch's observation and truth as CSV rows (when dumping).
    let dump: String

    init?(seed: UInt64, hours: Double, windowMinutes: Int, dumping: Bool) {
        self.seed = seed
        let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)
        var sleeper = SleeperProfile()
        sleeper.getsOutBeforeEnd = 600
        let config = NightConfig(seed: seed, duration: hours * 3600, sides: [SideConfig(sleeper: sleeper)], noise: .normal)
        let run = FrontEndNightRun(config: config, chunkFrames: 500)
        let truth = run.truth.sides[0]
        let base = FrontEndNightRun.epoch
        // The window's end: a second the sleeper is asleep in the last hours, on an epoch boundary.
        guard let lastSleep = truth.stage.lastIndex(where: { $0 != nil && $0 != .awake }) else { return nil }
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
        var dump = ""
        var t = window.start.timeIntervalSince1970 + epochLength
        func trueStage(_ instant: Date) -> SleepStage? {
            let s = Int((instant.timeIntervalSince1970 - base).rounded(.down))
            return truth.stage.indices.contains(s) ? truth.stage[s] : nil
        }
        while (decision == nil || dumping) && t <= end {
            let sessions = analyzer.analyze(beats: beats.filter { $0 < t }, vitals: vitals.filter { $0.time < t }, isFinal: false)
            if let last = sessions.last?.epochs.last, last.start + epochLength == t {
                let o = WakeObservation(epoch: last)
                if dumping, let p = o.probabilities {
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
        cpuSeconds = benchThreadCPU() - started
        self.decision = made
        smart = trueStage(made.time)
        fixed = trueStage(window.end)
        self.dump = dump
    }
}

private func benchThreadCPU() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

private func fmtWake(_ v: Double, _ decimals: Int = 2) -> String { String(format: "%.\(decimals)f", v) }
