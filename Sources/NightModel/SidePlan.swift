import Foundation
import SleepDomain

/// A burst of body movement: a few seconds of large, low-frequency deflections.
struct MovementBurst: Sendable {
    var start: Double
    var duration: Double
    var amplitude: Double
    /// Three sinusoids (Hz, phase) that make the deflection irregular.
    var components: [(frequency: Double, phase: Double, weight: Double)]

    var end: Double { start + duration }

    /// The deflection at time t (zero outside the burst), under a Hann window.
    @inline(__always)
    func value(at t: Double) -> Double {
        let x = (t - start) / duration
        guard x >= 0, x < 1 else { return 0 }
        let window = 0.5 - 0.5 * cos(2 * Double.pi * x)
        var v = 0.0
        for c in components { v += c.weight * sin(2 * Double.pi * c.frequency * (t - start) + c.phase) }
        return amplitude * window * v
    }
}

/// Everything decided in advance for one side: stages, per-second heart and breathing
/// rates, beat times, breath phase, posture (signal scale) and movement bursts. The piezo
/// and capacitance signals are rendered from this on demand. Only an alarm the sleeper
/// answers changes it afterwards (`wokenByAlarm`).
struct SidePlan: Sendable {
    let occupied: Bool
    let profile: SleeperProfile
    let duration: Int
    var stages: [SleepStage?]
    var inBed: [(start: Int, end: Int)]
    /// Per second: present in bed.
    var present: [Bool]
    /// Per second: breath phase in cycles at the start of the second (one extra entry at the end).
    let breathPhase: [Double]
    /// Per second: respiration amplitude in counts (0 when out of bed).
    var respirationAmplitude: [Double]
    /// Per second: BCG amplitude scale from posture (multiplies the profile's amplitude).
    let posture: [Double]
    /// Per second: true heart rate (beats per minute, exact beats-per-second × 60) and breathing rate.
    var heartRate: [Double?]
    var breathingRate: [Double?]
    /// Per second: true when a movement burst covers part of the second.
    var moving: [Bool]
    /// Heartbeat (R-wave) times in seconds.
    var beats: [Double]
    /// BCG amplitude of each beat, counts on channel 0.
    var beatAmplitude: [Double]
    var movements: [MovementBurst]
    /// Start times of `movements` (sorted), for binary search.
    var movementStarts: [Double]
    /// Per second: 0…1 how far the bed has warmed up to body temperature.
    let warmth: [Double]

    init(config side: SideConfig, duration: Int, rng: inout SplitMix64) {
        occupied = side.occupied
        profile = side.sleeper
        self.duration = duration
        let n = duration
        if side.occupied {
            let hyp = Hypnogram(duration: n, profile: side.sleeper, rng: &rng)
            stages = hyp.stages
            inBed = hyp.inBed
        } else {
            stages = [SleepStage?](repeating: nil, count: n)
            inBed = []
        }
        present = stages.map { $0 != nil }

        // Movement bursts: getting in and out, stage transitions, and a stage-dependent rate.
        var moves: [MovementBurst] = []
        let bcgAmplitude = side.sleeper.bcgAmplitude
        func burst(at t: Double, big: Bool) {
            let dur = big ? rng.uniform(6, 14) : rng.uniform(1.5, 7)
            let amp = bcgAmplitude * (big ? rng.uniform(5, 10) : rng.uniform(1.5, 6))
            var comps: [(Double, Double, Double)] = []
            for _ in 0..<3 { comps.append((rng.uniform(0.3, 6), rng.uniform(0, 2 * .pi), rng.uniform(0.4, 1))) }
            moves.append(MovementBurst(start: t, duration: dur, amplitude: amp, components: comps))
        }
        for (a, b) in inBed {
            burst(at: Double(a) - 2, big: true)
            burst(at: Double(b) - 6, big: true)
        }
        var s = 0
        while s < n {
            guard let stage = stages[s] else { s += 1; continue }
            if s > 0, let prev = stages[s - 1], prev != stage, rng.chance(0.5) {
                burst(at: Double(s) + rng.uniform(-5, 5), big: false)
                s += 20
                continue
            }
            let perHour = StagePhysiology.of(stage).movementsPerHour
            if rng.chance(perHour / 3600) { burst(at: Double(s), big: false); s += 10; continue }
            s += 1
        }
        moves.sort { $0.start < $1.start }
        movements = moves
        movementStarts = moves.map(\.start)
        var moving = [Bool](repeating: false, count: n)
        for m in moves {
            let a = max(0, Int(m.start.rounded(.down))), b = min(n, Int(m.end.rounded(.up)))
            if a < b { for i in a..<b { moving[i] = true } }
        }
        self.moving = moving

        // Posture: each movement may leave the body in a new position, scaling the signal.
        var posture = [Double](repeating: 1, count: n)
        var current = rng.uniform(0.75, 1.15)
        var mi = 0
        for i in 0..<n {
            while mi < moves.count && moves[mi].end <= Double(i) {
                if rng.chance(0.6) { current = rng.uniform(0.6, 1.25) }
                mi += 1
            }
            posture[i] = current
        }
        self.posture = posture

        // Heart and breathing rates: stage targets (through first-order lags so stage
        // changes are gradual) plus a night-long drift, a slow stage-dependent wander (the
        // very-low-frequency swings real nights show, widest in REM, smallest in deep sleep)
        // and an arousal bump after each movement. Constants: `StagePhysiology`.
        let prof = side.sleeper
        let rest = prof.restingHeartRate, br0 = prof.breathingRate
        var hr = [Double](repeating: rest, count: n)
        var brate = [Double](repeating: br0, count: n)
        var hrLag = rest + 8, brLag = br0 + 2
        var hrWander = 0.0, brWander = 0.0, arousal = 0.0
        mi = 0
        for i in 0..<n {
            let p = StagePhysiology.of(stages[i] ?? .awake)
            let progress = Double(i) / Double(max(n, 1))
            while mi < moves.count && moves[mi].start <= Double(i) {
                if present[i] { arousal = max(arousal, rng.uniform(4, 10)) }
                mi += 1
            }
            arousal *= exp(-1.0 / 25)
            let a = exp(-1.0 / p.wanderTau)
            hrWander = a * hrWander + p.wanderSD * (1 - a * a).squareRoot() * rng.gaussian()
            let ab = exp(-1.0 / p.breathingWanderTau)
            brWander = ab * brWander + p.breathingWanderSD * (1 - ab * ab).squareRoot() * rng.gaussian()
            let hrTarget = rest + p.heartRateOffset + 3 - 4 * progress
            let brTarget = br0 + p.breathingOffset + brWander
            hrLag += (hrTarget - hrLag) * (1 - exp(-1.0 / 30))
            brLag += (brTarget - brLag) * (1 - exp(-1.0 / 20))
            hr[i] = min(max(hrLag + hrWander + arousal, 38), 150)
            brate[i] = min(max(brLag, 6), 30)
        }

        // Breath phase integrates the breathing rate; amplitude varies breath to breath.
        var phase = [Double](repeating: 0, count: n + 1)
        var respAmp = [Double](repeating: 0, count: n)
        var ampWander = 0.0
        for i in 0..<n {
            phase[i + 1] = phase[i] + brate[i] / 60
            let irregular = stages[i].map { StagePhysiology.of($0).breathIrregularity } ?? 0
            let a = exp(-1.0 / 6)
            ampWander = a * ampWander + irregular * (1 - a * a).squareRoot() * rng.gaussian()
            respAmp[i] = present[i] ? prof.respirationAmplitude * posture[i] * max(0.3, 1 + ampWander) : 0
        }
        breathPhase = phase
        respirationAmplitude = respAmp

        // Beats: RR = 60/HR modulated by respiratory sinus arrhythmia (breath phase), a
        // ~0.1 Hz baroreflex (LF) rhythm whose phase wanders, and beat-to-beat noise, each
        // scaled per stage (`StagePhysiology`) and by the sleeper's `hrvScale`.
        var beats: [Double] = []
        var amps: [Double] = []
        beats.reserveCapacity(n * 3 / 2)
        amps.reserveCapacity(n * 3 / 2)
        let lfFrequency = rng.uniform(0.08, 0.12)
        var lfPhase = rng.uniform(0, 2 * .pi)
        for (a, b) in inBed {
            var t = Double(a) + rng.uniform(0, 0.8)
            while t < Double(b) {
                let i = min(Int(t), n - 1)
                let frac = t - Double(i)
                let ph = phase[i] + frac * (phase[i + 1] - phase[i])
                let p = StagePhysiology.of(stages[i] ?? .awake)
                let breathMod = 1 + 0.2 * sin(2 * Double.pi * ph)
                beats.append(t)
                amps.append(prof.bcgAmplitude * posture[i] * breathMod * (1 + 0.05 * rng.gaussian()))
                let rr = 60 / hr[i] * (1 + prof.hrvScale * (-p.rsa * sin(2 * Double.pi * ph)
                                                            - p.lowFrequency * sin(lfPhase)
                                                            + p.jitter * rng.gaussian()))
                let step = min(max(rr, 0.3), 2.0)
                lfPhase += 2 * Double.pi * lfFrequency * step + 0.1 * rng.gaussian()
                t += step
            }
        }
        self.beats = beats
        beatAmplitude = amps

        // True rates per second: heart rate from the beats themselves (time-weighted 60/RR),
        // breathing from the phase advance; nil out of bed.
        var trueHR = [Double?](repeating: nil, count: n)
        var trueBR = [Double?](repeating: nil, count: n)
        var acc = [Double](repeating: 0, count: n)
        var cov = [Double](repeating: 0, count: n)
        if beats.count >= 2 {
            for k in 0..<(beats.count - 1) {
                let a = beats[k], b = beats[k + 1]
                let rate = 60 / (b - a)
                var s0 = Int(a)
                while Double(s0) < b && s0 < n {
                    let lo = max(a, Double(s0)), hi = min(b, Double(s0 + 1))
                    if hi > lo { acc[s0] += rate * (hi - lo); cov[s0] += hi - lo }
                    s0 += 1
                }
            }
        }
        for i in 0..<n where present[i] {
            if cov[i] > 0.5 { trueHR[i] = acc[i] / cov[i] } else { trueHR[i] = hr[i] }
            trueBR[i] = brate[i]
        }
        heartRate = trueHR
        breathingRate = trueBR

        // Bed warmth follows presence with slow lags (warming faster than cooling).
        var warmth = [Double](repeating: 0, count: n)
        var w = 0.0
        for i in 0..<n {
            w += present[i] ? (1 - w) * (1 - exp(-1.0 / 1200)) : -w * (1 - exp(-1.0 / 2400))
            warmth[i] = w
        }
        self.warmth = warmth
    }

    /// Breath phase (cycles) at time t, linear between seconds.
    @inline(__always)
    func phase(at t: Double) -> Double {
        if t <= 0 { return breathPhase[0] }
        let i = Int(t)
        if i >= duration { return breathPhase[duration] }
        return breathPhase[i] + (t - Double(i)) * (breathPhase[i + 1] - breathPhase[i])
    }

    /// Whether the sleeper is in bed at time t (false outside the night).
    @inline(__always)
    func isPresent(at t: Double) -> Bool {
        let i = Int(t.rounded(.down))
        return i >= 0 && i < duration && present[i]
    }

    /// How far into bed the body is at time t: 0 out, 1 in, ramping over 3 s at each transition.
    func presence(at t: Double) -> Double {
        for (a, b) in inBed {
            let start = Double(a), end = Double(b)
            if t < start - 3 || t > end + 3 { continue }
            let rampIn = min(max((t - start + 1.5) / 3, 0), 1)
            let rampOut = min(max((end - t + 1.5) / 3, 0), 1)
            return min(rampIn, rampOut)
        }
        return 0
    }
}
