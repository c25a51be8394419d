import Foundation
import NightModel
import PodAnalysis
import PodProtocol
import SleepAnalysis
import SleepDomain

/// The whole pipeline from the pod's bytes: virtual-pod nights encoded as a capture
/// (HELLO, the SET_CLOCK exchange, then PIEZO and CAPACITANCE frames exactly as a pod
/// streams them), analysed through `CaptureAnalysis` (records → CRC-checked frames →
/// router → front ends) and `SleepAnalyzer`, staged epochs scored against the stages the
/// model played; the time that takes; and the live pipeline's CPU per hour of data.
func runPodAnalysisBench(options: BenchOptions) throws {
    let hours = options.quick ? 2.0 : 8.0
    let seeds: [UInt64] = options.quick ? [31, 32] : [31, 32, 33, 34]
    print("podanalysis nights: \(fmtPA(hours, 0)) h, both sides occupied, normal noise, pump on, 2 channels, seeds \(seeds.map(String.init).joined(separator: ","))")
    let utc = TimeZone(identifier: "UTC")!
    let analyzer = SleepAnalyzer(timeZone: utc)
    var evaluations: [StagingEvaluation] = []
    // The stager alone on the beats the model played (no pod, no front end): separates what
    // the signal path loses from what the stager makes of this physiology.
    var trueBeatEvaluations: [StagingEvaluation] = []
    // The same vitals staged without breathing, with the fitted movement emission instead of
    // the night's own, and without the awake bed entries and exits: what each of them adds.
    let variants: [(name: String, analyzer: SleepAnalyzer, what: String)] = [
        ("no_breathing", SleepAnalyzer(timeZone: utc, learnsBreathing: false), "breathing not learnt"),
        ("fitted_movement", SleepAnalyzer(timeZone: utc, learnsMovement: false),
         "the fitted movement emission instead of the night's"),
        ("no_bed_edges", SleepAnalyzer(timeZone: utc, awakeAtBedEdges: false),
         "getting into and out of bed not taken as awake"),
        ("epoch_argmax", SleepAnalyzer(timeZone: utc, decidesWakeByNight: false),
         "each epoch's likeliest stage instead of the night's wake share"),
    ]
    var variantEvaluations = [[StagingEvaluation]](repeating: [], count: variants.count)
    var captureCPU: [Double] = [], stagingCPU: [Double] = [], wall: [Double] = []
    var captureMB = 0.0
    var firstNight: [UInt8] = []
    for seed in seeds {
        let config = NightConfig(seed: seed, duration: hours * 3600, noise: .normal)
        let night = try VirtualNightCapture(config: config)
        captureMB = Double(night.bytes.count) / 1e6
        if firstNight.isEmpty { firstNight = night.bytes }

        let wallStart = ContinuousClock.now
        let cpuStart = paThreadCPUSeconds()
        let analysis = try CaptureAnalysis(capture: night.bytes)
        let cpuMid = paThreadCPUSeconds()
        var sessions: [BedSide: [SleepSession]] = [:]
        for side in BedSide.allCases {
            sessions[side] = analyzer.analyze(beats: analysis[side].beats, vitals: analysis[side].vitals)
        }
        let cpuEnd = paThreadCPUSeconds()
        let elapsed = ContinuousClock.now - wallStart
        wall.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        captureCPU.append(cpuMid - cpuStart)
        stagingCPU.append(cpuEnd - cpuMid)

        for side in BedSide.allCases {
            let e = night.evaluation(side: side, sessions: sessions[side] ?? [])
            evaluations.append(e)
            for (k, variant) in variants.enumerated() {
                variantEvaluations[k].append(night.evaluation(
                    side: side, sessions: variant.analyzer.analyze(beats: analysis[side].beats, vitals: analysis[side].vitals)))
            }
            let start = Double(VirtualNightCapture.startMillis) / 1000
            let beats = night.truth.sides[side.index].beatTimes.map { $0 + start + BCGTemplate.jDelay }
            trueBeatEvaluations.append(night.evaluation(
                side: side, sessions: analyzer.analyze(AnalysisInput(beats: beats, inBed: .wholeSpan))))
            let c = analysis.counters[side]
            print(String(format: "podanalysis.night.seed%llu.%@: acc4 %.3f k4 %.3f k3 %.3f k2 %.3f tst_bias %+.1f min sessions %d epochs %d frames %d missing_samples %d",
                         seed, side.description, e.accuracy(.four), e.kappa(.four), e.kappa(.three), e.kappa(.two),
                         e.totalSleepBiasMinutes, sessions[side]?.count ?? 0, e.pairs.count, c.piezoFrames, c.missingSamples))
        }
    }
    let pooled = StagingEvaluation.pooled(evaluations)
    print(String(format: "podanalysis.virtual.acc4: %.3f", pooled.accuracy(.four)))
    print(String(format: "podanalysis.virtual.kappa4: %.3f", pooled.kappa(.four)))
    print(String(format: "podanalysis.virtual.acc3: %.3f", pooled.accuracy(.three)))
    print(String(format: "podanalysis.virtual.kappa3: %.3f", pooled.kappa(.three)))
    print(String(format: "podanalysis.virtual.acc2: %.3f", pooled.accuracy(.two)))
    print(String(format: "podanalysis.virtual.kappa2: %.3f", pooled.kappa(.two)))
    print(String(format: "podanalysis.virtual.tst_bias: %+.1f min (mean per side-night), within ±30 min: %d/%d side-nights",
                 pooled.totalSleepBiasMinutes / Double(max(evaluations.count, 1)),
                 evaluations.filter { abs($0.totalSleepBiasMinutes) <= 30 }.count, evaluations.count))
    print(String(format: "podanalysis.virtual.wake_sensitivity: %.3f", pooled.wakeSensitivity))
    print("podanalysis.virtual.confusion4 (rows truth awake/core/deep/rem, cols predicted): \(pooled.confusion(.four))")
    /// One line for the same vitals staged another way.
    func variantLine(_ name: String, _ evaluations: [StagingEvaluation], _ what: String) {
        let p = StagingEvaluation.pooled(evaluations)
        print(String(format: "podanalysis.virtual.%@: acc4 %.3f k4 %.3f k3 %.3f k2 %.3f tst_bias %+.1f min wake_sensitivity %.3f (same vitals, %@)",
                     name, p.accuracy(.four), p.kappa(.four), p.kappa(.three), p.kappa(.two),
                     p.totalSleepBiasMinutes / Double(max(evaluations.count, 1)), p.wakeSensitivity, what))
    }
    for (k, variant) in variants.enumerated() { variantLine(variant.name, variantEvaluations[k], variant.what) }
    let truePooled = StagingEvaluation.pooled(trueBeatEvaluations)
    print(String(format: "podanalysis.virtual.true_beats: acc4 %.3f k4 %.3f k3 %.3f k2 %.3f tst_bias %+.1f min (stager on the model's own beat times, whole span in bed)",
                 truePooled.accuracy(.four), truePooled.kappa(.four), truePooled.kappa(.three), truePooled.kappa(.two),
                 truePooled.totalSleepBiasMinutes / Double(max(trueBeatEvaluations.count, 1))))

    // Speed: bytes of one two-sided night to staged sessions, on this thread.
    let scale = 8 / hours
    let capture = captureCPU.reduce(0, +) / Double(captureCPU.count) * scale
    let staging = stagingCPU.reduce(0, +) / Double(stagingCPU.count) * scale
    let wallMean = wall.reduce(0, +) / Double(wall.count) * scale
    print("podanalysis.speed.capture_mb: \(fmtPA(captureMB * scale, 0)) MB (8-h two-sided 2-channel 500 Hz capture)")
    print("podanalysis.speed.capture_to_vitals: \(fmtPA(capture, 3)) s CPU (records, CRC, decode, router, two front ends)")
    print("podanalysis.speed.staging: \(fmtPA(staging, 3)) s CPU (SleepAnalyzer, both sides)")
    print("podanalysis.speed.night_from_capture: \(fmtPA(capture + staging, 3)) s CPU per 8-h two-sided night (target < 1.5 s)")
    print("podanalysis.speed.night_from_capture_wall: \(fmtPA(wallMean, 3)) s wall")

    // Memory: the command on the first night's capture, as a child process.
    try runCaptureMemoryBench(capture: firstNight, hours: hours)
    firstNight = []

    // Live: one hour of the pod's byte stream, decoded and routed as it arrives (1 KiB
    // reads), newest vitals read back every second as `podbridge stream` does.
    var live = try LiveStreamBench(config: NightConfig(seed: 35, duration: options.quick ? 900 : 3600))
    let liveSeconds = live.run()
    let dataHours = live.seconds / 3600
    print("podanalysis.live.cpu_per_hour: \(fmtPA(liveSeconds / dataHours, 3)) s CPU per hour of two-sided data (decode, route, front ends)")
    print("podanalysis.live.cpu_share: \(fmtPA(100 * liveSeconds / live.seconds, 4)) % of one core (target < 0.5 %)")
    print("podanalysis.live.vitals_read: left HR \(live.lastLeftHR.map { fmtPA($0, 0) } ?? "-") bpm at the end (sanity)")
}

/// A NightModel night as the capture a hub would have recorded: HELLO, SET_CLOCK (anchor
/// at tick 1234 = 22:30:00 UTC), then per side a 50-sample PIEZO block every 100 ms and a
/// CAPACITANCE reading every 0.5 s, in tick order.
struct VirtualNightCapture {
    static let startMillis: Int64 = 1_750_026_600_000  // 2025-06-15 22:30:00 UTC
    static let anchorTick: UInt64 = 1234
    let bytes: [UInt8]
    let truth: GroundTruth

    init(config: NightConfig) throws {
        var sim = NightSimulator(config: config)
        let sides = config.sides.count
        let channels = config.channelsPerSide
        let ticks = UInt64(config.duration * 500)
        let perSecond = sides * (10 * (37 + 200 * channels) + 2 * 36)
        var b = CaptureBuilder(reservingCapacity: Int(config.duration) * perSecond + 1024)
        let t0 = UInt64(Self.startMillis) * 1000
        let info = PodInfo(firmware: FirmwareVersion(1, 0, 0), sides: UInt8(sides), piezoChannelsPerSide: UInt8(channels),
                           sampleRate: 500, capacitanceRateMilliHz: 2000, features: .all, bootCount: 1,
                           tick: Self.anchorTick - 20, serial: "BENCH0001")
        try b.append(.hello(HelloRequest()), direction: .hubToPod, requestID: 1, receivedMicros: t0 - 60_000)
        try b.append(.response(Response(request: .hello, status: .ok, body: .hello(info))), requestID: 1,
                     receivedMicros: t0 - 58_000)
        try b.appendClockExchange(ClockAnchor(tick: Self.anchorTick, unixMillis: Self.startMillis, utcOffsetMinutes: 0),
                                  requestID: 2, receivedMicros: t0 - 2_000)
        var tick: UInt64 = 0
        while tick < ticks {
            let received = t0 + (tick + 50) * 2000
            for side in 0..<sides {
                try b.append(.piezo(PiezoBlock(side: BedSide(wireValue: UInt8(side))!, channels: UInt8(channels), gain: 16,
                                               firstTick: Self.anchorTick + tick, samples: sim.piezo(side: side, count: 50))),
                             receivedMicros: received)
            }
            tick += 50
            if tick % 250 == 0 {
                for side in 0..<sides {
                    let values = sim.capacitance(side: side, at: Double(tick) / 500)
                    try b.append(.capacitance(CapacitanceReading(side: BedSide(wireValue: UInt8(side))!,
                                                                             tick: Self.anchorTick + tick, values: values)),
                                 receivedMicros: received)
                }
            }
        }
        bytes = b.bytes
        truth = sim.truth
    }

    /// Scores one side's sessions against the model's stages by the held-out rule: each
    /// 30-s epoch (on the Unix half-minute grid) the sleeper spent mostly in bed gets the
    /// stage that filled most of its seconds; the prediction is the staged epoch at its
    /// midpoint, awake where no session covers it.
    func evaluation(side: BedSide, sessions: [SleepSession]) -> StagingEvaluation {
        let t = truth.sides[side.index]
        let start = Double(Self.startMillis) / 1000
        var predicted: [Int: SleepStage] = [:]
        for s in sessions { for e in s.epochs { predicted[Int(e.start / epochLength)] = e.stage } }
        var pairs: [(reference: SleepStage, predicted: SleepStage)] = []
        let firstEpoch = Int((start / epochLength).rounded(.down))
        let lastEpoch = Int(((start + Double(t.present.count)) / epochLength).rounded(.down))
        for k in firstEpoch...lastEpoch {
            guard let truthStage = t.epochStage(startingAt: Int(Double(k) * epochLength - start)) else { continue }
            pairs.append((truthStage, predicted[k] ?? .awake))
        }
        return StagingEvaluation(pairs: pairs)
    }
}

/// The live path on a byte stream: `FrameDecoder` → `LivePodAnalysis`, vitals read each second.
struct LiveStreamBench {
    let stream: [UInt8]
    let anchor: ClockAnchor
    let seconds: Double
    private(set) var lastLeftHR: Double?

    init(config: NightConfig) throws {
        var sim = NightSimulator(config: config)
        var encoder = FrameEncoder()
        var out: [UInt8] = []
        out.reserveCapacity(Int(config.duration) * 8_500)
        let ticks = UInt64(config.duration * 500)
        var tick: UInt64 = 0
        while tick < ticks {
            for side in 0..<config.sides.count {
                try encoder.encode(.piezo(PiezoBlock(side: BedSide(wireValue: UInt8(side))!, channels: UInt8(config.channelsPerSide),
                                                     gain: 16, firstTick: tick, samples: sim.piezo(side: side, count: 50))),
                                   appendingTo: &out)
            }
            tick += 50
            if tick % 250 == 0 {
                for side in 0..<config.sides.count {
                    try encoder.encode(.capacitance(CapacitanceReading(
                        side: BedSide(wireValue: UInt8(side))!, tick: tick, values: sim.capacitance(side: side, at: Double(tick) / 500))),
                                       appendingTo: &out)
                }
            }
        }
        stream = out
        anchor = ClockAnchor(tick: 0, unixMillis: VirtualNightCapture.startMillis, utcOffsetMinutes: 0)
        seconds = config.duration
    }

    /// Thread CPU seconds to decode and analyse the whole stream.
    mutating func run() -> Double {
        let decoder = FrameDecoder()
        var live = LivePodAnalysis()
        live.anchor(anchor)
        let readEvery = stream.count / Int(seconds)
        var sinceRead = 0
        var hr: Double?
        let start = paThreadCPUSeconds()
        stream.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let n = min(1024, all.count - offset)
                decoder.decode(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + n)])) { frame in
                    live.apply(frame.message)
                }
                offset += n
                sinceRead += n
                if sinceRead >= readEvery {
                    sinceRead = 0
                    hr = live.vitals(for: .left)?.latest.heartRate.value ?? hr
                }
            }
        }
        let cpu = paThreadCPUSeconds() - start
        lastLeftHR = hr
        return cpu
    }
}

/// CPU time of the calling thread (other processes on a shared machine do not count).
private func paThreadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

private func fmtPA(_ v: Double, _ decimals: Int = 2) -> String {
    guard v.isFinite else { return "n/a" }
    return String(format: "%.\(decimals)f", v)
}
