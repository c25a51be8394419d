import Foundation
import SleepDomain

/// Plays a night: piezo samples, capacitance and environment readings for each side,
/// rendered on demand from a plan drawn once from the seed. Deterministic: the same config
/// gives the same samples whatever the chunk sizes asked for.
public struct NightSimulator: Sendable {
    public let config: NightConfig
    private var plan: NightPlan
    /// Next piezo sample index per side.
    private var cursors: [Int]
    /// Coloured-noise filter state per side and channel.
    private var noiseState: [[Double]]

    public init(config: NightConfig) {
        var c = config
        c.channelsPerSide = min(max(c.channelsPerSide, 1), 2)
        if !(c.sampleRate > 0) { c.sampleRate = 500 }
        if !(c.capacitanceRate > 0) { c.capacitanceRate = 2 }
        if !(c.duration >= 0) { c.duration = 0 }
        if c.sides.isEmpty { c.sides = [SideConfig()] }
        self.config = c
        plan = NightPlan(config: c)
        cursors = [Int](repeating: 0, count: c.sides.count)
        noiseState = [[Double]](repeating: [Double](repeating: 0, count: c.channelsPerSide), count: c.sides.count)
    }

    /// What was played (stages, rates, presence, beats per side; pump runs).
    public var truth: GroundTruth { plan.truth }

    /// The index of the next piezo sample `piezo(side:count:)` returns for `side`.
    public func piezoCursor(side: Int) -> Int { cursors.indices.contains(side) ? cursors[side] : 0 }

    /// The next `count` piezo samples of `side` (channels interleaved: c0, c1, c0, c1, …),
    /// continuing from where the last call for that side ended (model time 0 at first).
    /// An unknown side or a non-positive count gives an empty array. After the night ends
    /// the bed is empty and only noise, drift and coupling remain.
    public mutating func piezo(side: Int, count: Int) -> [Int32] {
        guard cursors.indices.contains(side), count > 0 else { return [] }
        let start = cursors[side]
        cursors[side] += count
        let ch = config.channelsPerSide
        var out = [Int32](repeating: 0, count: count * ch)
        // Body components once per side (each channel mixes them with its own gains).
        var own = BodyComponents(count: count)
        plan.renderBody(side: side, start: start, into: &own)
        var partners: [BodyComponents] = []
        if config.partnerCoupling != 0 {
            for p in plan.sides.indices where p != side && plan.sides[p].occupied {
                var b = BodyComponents(count: count)
                plan.renderBody(side: p, start: start, into: &b)
                partners.append(b)
            }
        }
        var buf = [Double](repeating: 0, count: count)
        for c in 0..<ch {
            let rg = plan.respGain[c], bg = plan.bcgGain[c], mg = plan.moveGain[c]
            for i in 0..<count { buf[i] = rg * own.respiration[i] + bg * own.bcg[i] + mg * own.movement[i] }
            let k = config.partnerCoupling
            for b in partners {
                for i in 0..<count { buf[i] += k * (rg * b.respiration[i] + bg * b.bcg[i] + mg * b.movement[i]) }
            }
            plan.renderPump(side: side, channel: c, start: start, into: &buf)
            plan.renderDriftAndNoise(side: side, channel: c, start: start, state: &noiseState[side][c], into: &buf)
            let offset = plan.dcOffset[side][c]
            for i in 0..<count {
                let v = min(max(buf[i] + offset, -2_147_483_648), 2_147_483_647)
                out[i * ch + c] = Int32(v < 0 ? v - 0.5 : v + 0.5)
            }
        }
        return out
    }

    /// The three capacitance channels of `side` at model time `t` (readings are held
    /// between the capacitance sample instants). Unknown side: an empty array.
    public func capacitance(side: Int, at t: Double) -> [Int32] {
        guard plan.sides.indices.contains(side) else { return [] }
        let tick = (t * config.capacitanceRate).rounded(.down)
        let tq = tick / config.capacitanceRate
        let sp = plan.sides[side]
        var partnerLoad = 0.0
        for p in plan.sides.indices where p != side { partnerLoad += plan.sides[p].presence(at: tq) }
        let load = sp.presence(at: tq)
        let si = min(max(Int(tq), 0), max(sp.duration - 1, 0))
        let posture = sp.duration > 0 ? sp.posture[si] : 1
        let pumpOn = plan.pump.contains { tq >= $0.start && tq < $0.end }
        var out = [Int32](repeating: 0, count: 3)
        for c in 0..<3 {
            let base = plan.capBaseline[side][c]
            let delta = plan.capDelta[c]
            let drift = 15 * sin(2 * Double.pi * tq / 7200 + Double(c + side))
            let key = plan.seedKey ^ UInt64(0xCA9 &+ side &* 16 &+ c)
            let noise = (pumpOn ? 12.0 : 5.0) * NoiseHash.gaussian(key: key, index: UInt64(bitPattern: Int64(tick)))
            let v = base + drift + delta * load * (0.8 + 0.25 * posture) + 0.03 * delta * partnerLoad + noise
            out[c] = Int32(v.rounded())
        }
        return out
    }

    /// Temperatures and humidity at model time `t`.
    public func environment(at t: Double) -> Environment {
        let d = max(config.duration, 1)
        let ambient = 21 + 0.8 * sin(2 * Double.pi * t / 43_200 + 0.4) - 1.0 * min(max(t / d, 0), 1)
        let tick = UInt64(max(0, (t / 5).rounded(.down)))
        let humidity = 45 + 4 * sin(2 * Double.pi * t / 20_000 + 1.1)
            + 0.3 * NoiseHash.gaussian(key: plan.seedKey ^ 0x4E, index: tick)
        var beds: [Double] = []
        for (k, sp) in plan.sides.enumerated() {
            let i = min(max(Int(t), 0), max(sp.duration - 1, 0))
            let w = sp.duration > 0 ? sp.warmth[i] : 0
            let bed = ambient + 1.5 + (33.5 - ambient - 1.5) * w
                + 0.05 * NoiseHash.gaussian(key: plan.seedKey ^ UInt64(0xBED0 + k), index: tick)
            beds.append(bed)
        }
        return Environment(bedTemperature: beds, ambientTemperature: ambient, humidity: humidity)
    }

    /// The sleeper on `side` hears the alarm at model time `t` (from now on the night follows
    /// their answer, `SleeperProfile.alarmResponse`): an empty side or an ignored alarm changes
    /// nothing; otherwise they lie awake for the drawn minutes and get out of bed, and stay
    /// out for the rest of that stay. Samples already rendered are not changed. Recorded in
    /// `truth.alarmReactions`. Nil for an unknown side.
    @discardableResult
    public mutating func alarmHeard(side: Int, at t: Double) -> AlarmReaction? {
        guard plan.sides.indices.contains(side), t.isFinite else { return nil }
        let sp = plan.sides[side]
        let s = Int(t.rounded(.down))
        let stage = s >= 0 && s < sp.duration ? sp.stages[s] : nil
        let response = sp.profile.alarmResponse ?? AlarmResponse()
        let heard = plan.truth.alarmReactions.filter { $0.side == side && $0.stage != nil }.count
        var reaction = AlarmReaction(side: side, heardAt: t, stage: stage, gotUpAt: nil)
        var sides = plan.sides
        if let stage, heard >= response.ignoredAlarms {
            var rng = SplitMix64(seed: plan.seedKey ^ UInt64(truncatingIfNeeded: s) &* 0xA1A2 ^ UInt64(side))
            let range = response.minutes(after: stage)
            let up = s + max(1, Int((rng.uniform(range.lowerBound, range.upperBound) * 60).rounded()))
            let stayEnd = sp.inBed.first { $0.start <= s && s < $0.end }?.end ?? up
            sides[side] = sp.wokenByAlarm(at: s, getsUpAt: up, rng: &rng)
            reaction.gotUpAt = Double(min(up, stayEnd))
        }
        plan = NightPlan(plan, sides: sides, reactions: plan.truth.alarmReactions + [reaction])
        return reaction
    }

    /// Per-second ground truth as CSV (see `GroundTruth.csv(timeOffset:)` for the columns).
    public func groundTruthCSV(timeOffset: Double = 0) -> String { plan.truth.csv(timeOffset: timeOffset) }

    /// One side's beat times as a beats CSV (header `beat_time`).
    public func beatsCSV(side: Int, timeOffset: Double = 0) -> String {
        plan.truth.beatsCSV(side: side, timeOffset: timeOffset)
    }
}

/// The immutable plan of a night, shared by copies of the simulator.
final class NightPlan: Sendable {
    let sides: [SidePlan]
    let pump: [PumpBurst]
    let truth: GroundTruth
    let sampleRate: Double
    let seedKey: UInt64
    let dcOffset: [[Double]]
    let capBaseline: [[Double]]
    let capDelta: [Double] = [380, 520, 300]
    let whiteSD: Double
    let colouredSD: Double
    let driftAmplitude: Double
    /// Channel gains for the BCG and the respiration (a second channel sits elsewhere under the body).
    let bcgGain: [Double] = [1.0, 0.75]
    let respGain: [Double] = [1.0, 1.25]
    let moveGain: [Double] = [1.0, 0.8]
    let pumpGain: [[Double]] = [[1.0, 0.8], [0.9, 0.7]]

    init(config: NightConfig) {
        var rng = SplitMix64(seed: config.seed)
        seedKey = SplitMix64.mix(config.seed ^ 0xB0D1)
        sampleRate = config.sampleRate
        let n = Int(config.duration.rounded(.down))
        var sides: [SidePlan] = []
        for (k, s) in config.sides.enumerated() {
            var sideRng = rng.fork(UInt64(k + 1) &* 0x51DE)
            sides.append(SidePlan(config: s, duration: n, rng: &sideRng))
        }
        self.sides = sides
        var pumpRng = rng.fork(0x9_0_3_9)
        pump = config.pumpVibration ? PumpBurst.schedule(duration: config.duration, noise: config.noise, rng: &pumpRng) : []
        var offsets: [[Double]] = []
        var capBase: [[Double]] = []
        for _ in config.sides {
            offsets.append([rng.uniform(-60_000, 60_000), rng.uniform(-60_000, 60_000)])
            capBase.append([1400 + rng.uniform(-80, 80), 1550 + rng.uniform(-80, 80), 1300 + rng.uniform(-80, 80)])
        }
        dcOffset = offsets
        capBaseline = capBase
        switch config.noise {
        case .low: whiteSD = 1_000; colouredSD = 1_500; driftAmplitude = 8_000
        case .normal: whiteSD = 4_000; colouredSD = 6_000; driftAmplitude = 15_000
        case .high: whiteSD = 12_000; colouredSD = 18_000; driftAmplitude = 30_000
        }
        truth = Self.truth(duration: n, sides: sides, pump: pump, reactions: [])
    }

    /// A copy of `other` with new side plans (after an alarm) and the alarm reactions so far.
    init(_ other: NightPlan, sides: [SidePlan], reactions: [AlarmReaction]) {
        self.sides = sides
        pump = other.pump
        sampleRate = other.sampleRate
        seedKey = other.seedKey
        dcOffset = other.dcOffset
        capBaseline = other.capBaseline
        whiteSD = other.whiteSD
        colouredSD = other.colouredSD
        driftAmplitude = other.driftAmplitude
        truth = Self.truth(duration: other.truth.duration, sides: sides, pump: other.pump, reactions: reactions)
    }

    private static func truth(duration: Int, sides: [SidePlan], pump: [PumpBurst], reactions: [AlarmReaction]) -> GroundTruth {
        GroundTruth(
            duration: duration,
            sides: sides.map {
                SideTruth(occupied: $0.occupied, present: $0.present, stage: $0.stages,
                          heartRate: $0.heartRate, breathingRate: $0.breathingRate,
                          movement: $0.moving, beatTimes: $0.beats)
            },
            pumpBursts: pump, alarmReactions: reactions)
    }

    /// Respiration, BCG and movement of `side` (channel-0 scale) for samples from `start`.
    func renderBody(side: Int, start: Int, into body: inout BodyComponents) {
        let sp = sides[side]
        guard sp.occupied, sp.duration > 0 else { return }
        let count = body.respiration.count
        let fs = sampleRate
        let t0 = Double(start) / fs, t1 = Double(start + count) / fs
        guard t1 > 0, t0 < Double(sp.duration) + 1 else { return }
        // Respiration: shaped waveform of the breath phase, per-second amplitude.
        let table = RespirationShape.table
        let tableMask = Double(table.count)
        body.respiration.withUnsafeMutableBufferPointer { b in
            for i in 0..<count {
                let t = Double(start + i) / fs
                let s = Int(t)
                guard s >= 0, s < sp.duration else { continue }
                let amp = sp.respirationAmplitude[s]
                if amp == 0 { continue }
                let ph = sp.breathPhase[s] + (t - Double(s)) * (sp.breathPhase[s + 1] - sp.breathPhase[s])
                let frac = ph - ph.rounded(.down)
                b[i] = amp * table[Int(frac * tableMask)]
            }
        }

        // BCG complexes of the beats that overlap this chunk.
        let beats = sp.beats
        var k = lowerBound(beats, t0 - BCGTemplate.length)
        let tpl = BCGTemplate.table
        let rate = BCGTemplate.tableRate
        body.bcg.withUnsafeMutableBufferPointer { b in
            while k < beats.count && beats[k] < t1 {
                let tb = beats[k], a = sp.beatAmplitude[k]
                let first = max(0, Int(((tb - t0) * fs).rounded(.up)))
                let last = min(count, Int(((tb + BCGTemplate.length - t0) * fs).rounded(.up)))
                if first < last {
                    for i in first..<last {
                        let dt = Double(start + i) / fs - tb
                        let j = Int(dt * rate + 0.5)
                        if j >= 0 && j < tpl.count { b[i] += a * tpl[j] }
                    }
                }
                k += 1
            }
        }

        // Movement bursts.
        // Bursts are sorted by start and last at most 15 s: start the scan just before t0.
        var mi = lowerBound(sp.movementStarts, t0 - 15)
        while mi < sp.movements.count && sp.movements[mi].start < t1 {
            let m = sp.movements[mi]
            mi += 1
            guard m.end > t0 else { continue }
            let first = max(0, Int(((m.start - t0) * fs).rounded(.down)))
            let last = min(count, Int(((m.end - t0) * fs).rounded(.up)))
            if first < last { for i in first..<last { body.movement[i] += m.value(at: Double(start + i) / fs) } }
        }
    }

    /// Pump vibration (same bursts on both sides, slightly different gains).
    func renderPump(side: Int, channel: Int, start: Int, into buf: inout [Double]) {
        guard !pump.isEmpty else { return }
        let fs = sampleRate, count = buf.count
        let t0 = Double(start) / fs, t1 = Double(start + count) / fs
        let g = pumpGain[min(side, 1)][channel]
        for p in pump where p.end + PumpBurst.thumpSpan > t0 && p.start < t1 {
            let first = max(0, Int(((p.start - t0) * fs).rounded(.down)))
            let last = min(count, Int(((p.end + PumpBurst.thumpSpan - t0) * fs).rounded(.up)))
            if first < last { for i in first..<last { buf[i] += g * p.value(at: Double(start + i) / fs) } }
        }
    }

    /// Slow baseline drift, white noise and in-band coloured noise.
    func renderDriftAndNoise(side: Int, channel: Int, start: Int, state: inout Double, into buf: inout [Double]) {
        let fs = sampleRate, count = buf.count
        let key = seedKey ^ UInt64(side &* 8 &+ channel &+ 1) &* 0x2545_F491_4F6C_DD1D
        let keyC = SplitMix64.mix(key ^ 0xC0102ED)
        // Drift: two slow sinusoids, advanced by rotation to avoid a sin() per sample.
        let w1 = 2 * Double.pi / 170 / fs, w2 = 2 * Double.pi / 410 / fs
        let p1 = Double(side * 2 + channel), p2 = Double(side + 3 * channel) + 0.5
        let t0 = Double(start)
        var s1 = sin(w1 * t0 + p1), c1 = cos(w1 * t0 + p1)
        var s2 = sin(w2 * t0 + p2), c2 = cos(w2 * t0 + p2)
        let cw1 = cos(w1), sw1 = sin(w1), cw2 = cos(w2), sw2 = sin(w2)
        let amp = driftAmplitude, white = whiteSD
        // AR(1) pole 0.97 at 500 Hz: a corner near 2.4 Hz, right in the cardiac band.
        let a = 0.97, gain = colouredSD * (1 - a * a).squareRoot()
        var x = state
        buf.withUnsafeMutableBufferPointer { b in
            for i in 0..<count {
                let idx = UInt64(start + i)
                x = a * x + gain * NoiseHash.gaussian(key: keyC, index: idx)
                b[i] += amp * (s1 + 0.6 * s2) + white * NoiseHash.gaussian(key: key, index: idx) + x
                let ns1 = s1 * cw1 + c1 * sw1; c1 = c1 * cw1 - s1 * sw1; s1 = ns1
                let ns2 = s2 * cw2 + c2 * sw2; c2 = c2 * cw2 - s2 * sw2; s2 = ns2
            }
        }
        state = x
    }

    private func lowerBound(_ a: [Double], _ x: Double) -> Int {
        var lo = 0, hi = a.count
        while lo < hi { let m = (lo + hi) / 2; if a[m] < x { lo = m + 1 } else { hi = m } }
        return lo
    }
}

/// One side's body signal for a run of samples, split so each channel can mix it.
struct BodyComponents {
    var respiration: [Double]
    var bcg: [Double]
    var movement: [Double]

    init(count: Int) {
        respiration = [Double](repeating: 0, count: count)
        bcg = [Double](repeating: 0, count: count)
        movement = [Double](repeating: 0, count: count)
    }
}

/// Breath waveform over one cycle: a quicker inhale (40%) and a slower exhale, −1…1.
enum RespirationShape {
    static let table: [Double] = {
        let n = 1024
        return (0..<n).map { i in
            let p = Double(i) / Double(n)
            return p < 0.4 ? -cos(Double.pi * p / 0.4) : cos(Double.pi * (p - 0.4) / 0.6)
        }
    }()
}
