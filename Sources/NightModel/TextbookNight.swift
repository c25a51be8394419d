import Foundation
import SleepDomain

/// A second synthetic night, deliberately unlike NightModel, from textbook sleep physiology
/// (AASM-style cycles; resting heart rate, breathing and their variability per stage from
/// the sleep-medicine literature), rendered as raw piezo for the real front end.
///
/// Differs from NightModel on purpose: ~100-min cycles with long early deep sleep and REM
/// that lengthens to half an hour; its own heart-rate and breathing levels per stage;
/// a three-wave BCG complex (I–J–K, no H or L) whose size follows the breath; AR(1)
/// coloured noise with occasional spikes; and movement as slow, large body shifts. Nothing
/// in it was tuned to the stager: the constants below were written down first. The tests
/// and `make bench` stage its nights with the shipped model (`SyntheticStagingTests`).
package struct TextbookNight: Sendable {
    package static let fs = 500.0
    /// A multiple of 30 s, so epochs line up with the stage grid.
    package static let start = 1_699_999_980.0
    /// Length of one scored epoch (s).
    package static let epochLength = 30.0

    package var seed: UInt64
    /// Heart rate in stage N2 (bpm) and breathing rate in N2 (per minute).
    package var restingHeartRate: Double
    package var breathingRate: Double
    /// Stage per 30-s epoch from `start`.
    package private(set) var stages: [SleepStage] = []

    /// How the night is laid out. `.typical` is the night every earlier figure was measured
    /// on; the others move the stage mix far from it, so the stager can be judged on nights
    /// whose wake share and deep sleep are unlike the labelled nights' (issue 14: each night's
    /// own stage mix, not an imposed one). Written down from the sleep-medicine literature
    /// before any of them was staged.
    package enum Pattern: String, Sendable, CaseIterable {
        /// ~100-min cycles, 15-min sleep onset, two brief awakenings, ~7 % awake.
        case typical
        /// A young sound sleeper: asleep in 5 min, long early deep sleep, no awakening until
        /// the end (~2 % awake).
        case sound
        /// An older sleeper (Ohayon et al. 2004: deep sleep falls and waking after sleep onset
        /// grows with age): little deep sleep, a 10-min awakening after each of the first four
        /// cycles and a 4-min one inside every cycle's light sleep (~20 % awake).
        case fragmented
        /// Sleep-maintenance insomnia: 40 min to fall asleep, then 80 min awake in the middle
        /// of the night after the second cycle, lying still (a body shift every couple of
        /// minutes, not a restless waking), ~25 % awake.
        case insomnia

        /// Five cycles of N1, N2 (split by `arousal`-minute awakenings when `n2` has more than
        /// one part), deep sleep and the light sleep after it, and REM, then any awakening;
        /// minutes, each drawn ±20 %.
        struct Layout {
            var sleepOnset: Double, n1: Double, n2: [Double], arousal: Double = 0
            var deep: [Double], afterDeep: Double, rem: [Double]
            var wakeAfterCycle: [(minutes: Double, lyingStill: Bool)?]
            var finalWaking: Double
        }

        var layout: Layout {
            switch self {
            case .typical:
                Layout(sleepOnset: 15, n1: 4, n2: [25], deep: [35, 25, 10, 0, 0], afterDeep: 10,
                       rem: [8, 15, 22, 28, 32], wakeAfterCycle: [nil, (2, false), nil, (2, false), nil], finalWaking: 10)
            case .sound:
                Layout(sleepOnset: 5, n1: 3, n2: [22], deep: [45, 30, 15, 0, 0], afterDeep: 8,
                       rem: [10, 18, 24, 30, 35], wakeAfterCycle: [nil, nil, nil, nil, nil], finalWaking: 3)
            case .fragmented:
                Layout(sleepOnset: 20, n1: 6, n2: [12, 12], arousal: 4, deep: [15, 8, 0, 0, 0], afterDeep: 8,
                       rem: [12, 18, 20, 22, 20], wakeAfterCycle: [(10, false), (10, false), (10, false), (10, false), nil],
                       finalWaking: 10)
            case .insomnia:
                Layout(sleepOnset: 40, n1: 5, n2: [25], deep: [30, 20, 5, 0, 0], afterDeep: 10,
                       rem: [8, 15, 22, 28, 30], wakeAfterCycle: [nil, (80, true), nil, nil, nil], finalWaking: 10)
            }
        }
    }

    package var pattern: Pattern
    /// Epochs awake but lying still (the insomniac's long waking): movement as in light sleep.
    package private(set) var lyingStill: [Bool] = []

    package init(seed: UInt64, restingHeartRate: Double = 64, breathingRate: Double = 15, pattern: Pattern = .typical) {
        self.seed = seed; self.restingHeartRate = restingHeartRate; self.breathingRate = breathingRate
        self.pattern = pattern
        var rng = Self.rng(seed)
        var list: [SleepStage] = [], still: [Bool] = []
        func add(_ s: SleepStage, minutes: Double, lyingStill: Bool = false) {
            let n = max(1, Int((minutes * rng.uniform(0.8, 1.2) * 2).rounded()))
            list += [SleepStage](repeating: s, count: n)
            still += [Bool](repeating: lyingStill, count: n)
        }
        let layout = pattern.layout
        add(.awake, minutes: layout.sleepOnset)
        for c in 0..<5 {
            add(.core, minutes: layout.n1) // N1
            for (j, minutes) in layout.n2.enumerated() { // N2, split by arousals into waking
                if j > 0 { add(.awake, minutes: layout.arousal) }
                add(.core, minutes: minutes)
            }
            if layout.deep[c] > 0 { add(.deep, minutes: layout.deep[c]); add(.core, minutes: layout.afterDeep) }
            add(.rem, minutes: layout.rem[c])
            if let w = layout.wakeAfterCycle[c] { add(.awake, minutes: w.minutes, lyingStill: w.lyingStill) }
        }
        add(.awake, minutes: layout.finalWaking)
        stages = list
        lyingStill = still
    }

    package var duration: Double { Double(stages.count) * Self.epochLength }

    /// Per-stage physiology: heart rate offset from N2 (bpm), its slow variability (bpm),
    /// breathing rate offset (per minute) and breath-to-breath variability (fraction), the
    /// share of seconds with a body movement.
    package static func physiology(_ s: SleepStage) -> (hr: Double, hrSD: Double, br: Double, brCV: Double, moving: Double) {
        switch s {
        case .awake: (hr: 9, hrSD: 3.0, br: 2, brCV: 0.15, moving: 0.12)
        case .core: (hr: 0, hrSD: 1.0, br: 0, brCV: 0.06, moving: 0.004)
        case .deep: (hr: -4, hrSD: 0.5, br: -1.5, brCV: 0.03, moving: 0)
        case .rem: (hr: 5, hrSD: 2.5, br: 2.5, brCV: 0.14, moving: 0.002)
        }
    }

    /// The night's piezo samples (one channel).
    package func samples() -> [Int32] {
        var rng = Self.rng(seed &+ 0x9E37)
        let n = Int(duration * Self.fs)
        var out = [Double](repeating: 120_000, count: n)
        var hrDrift = 0.0, brDrift = 0.0, level = restingHeartRate + 9, breath = breathingRate + 2
        var phase = 0.0, nextBeat = 0.5, noise = 0.0
        var shift = 0.0, shiftLeft = 0.0
        let seconds = Int(duration)
        for sec in 0..<seconds {
            let epoch = min(stages.count - 1, sec / 30)
            let stage = stages[epoch]
            var p = Self.physiology(stage)
            if lyingStill[epoch] { p.moving = Self.physiology(.core).moving * 2 }
            // Slow AR(1) wanders around the stage's level, which falls 4 bpm over the night.
            hrDrift = 0.97 * hrDrift + p.hrSD * 0.243 * rng.gaussian()
            brDrift = 0.95 * brDrift + p.brCV * breathingRate * 0.31 * rng.gaussian()
            let target = restingHeartRate + p.hr - 4 * Double(sec) / duration
            level += (target - level) / 60 // stages change the heart rate over about a minute
            breath += (breathingRate + p.br - breath) / 30
            if shiftLeft <= 0, rng.uniform(0, 1) < p.moving { shiftLeft = rng.uniform(2, 8); shift = rng.uniform(-1, 1) }
            for k in 0..<Int(Self.fs) {
                let i = sec * Int(Self.fs) + k
                let t = Double(i) / Self.fs
                let br = max(6, breath + brDrift)
                phase += 2 * Double.pi * br / 60 / Self.fs
                let resp = sin(phase)
                noise = 0.9 * noise + 1_200 * rng.gaussian()
                var v = 60_000 * resp + noise
                if rng.uniform(0, 1) < 2e-5 { v += rng.uniform(-1, 1) * 80_000 } // spikes
                if shiftLeft > 0 { v += 1_500_000 * shift * sin(2 * Double.pi * 0.7 * t) * rng.uniform(0.6, 1) }
                out[i] += v
            }
            if shiftLeft > 0 { shiftLeft -= 1 }
            // Beats: RSA (longer intervals on expiration) scaled down in REM and wake.
            let rsa = stage == .deep ? 0.05 : stage == .core ? 0.04 : 0.02
            while nextBeat < Double(sec + 1) {
                let amp = 45_000 * (1 + 0.2 * sin(phase))
                let lo = max(0, Int((nextBeat - 0.1) * Self.fs)), hi = min(n, Int((nextBeat + 0.15) * Self.fs))
                if lo < hi { for i in lo..<hi { out[i] += amp * Self.complex(Double(i) / Self.fs - nextBeat) } }
                let rate = max(35, level + hrDrift)
                nextBeat += 60 / rate * (1 + rsa * sin(phase + 1.0)) + 0.004 * rng.gaussian()
            }
        }
        return out.map { Int32(max(-2_000_000_000, min(2_000_000_000, $0.rounded()))) }
    }

    /// I–J–K complex around the J-peak at 0 (three waves, wider and more symmetric than
    /// the front-end tests' five-wave complex).
    package static func complex(_ dt: Double) -> Double {
        let waves: [(Double, Double, Double)] = [(-0.05, -0.5, 0.022), (0, 1, 0.025), (0.06, -0.6, 0.03)]
        var v = 0.0
        for (c, a, w) in waves { let x = (dt - c) / w; v += a * exp(-0.5 * x * x) }
        return v
    }

    /// NightModel's SplitMix64 (Box–Muller normals), seeded this generator's own way.
    package static func rng(_ seed: UInt64) -> SplitMix64 { SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 1) }
}
