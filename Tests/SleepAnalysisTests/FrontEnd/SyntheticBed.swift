import Foundation
@testable import SleepAnalysis

/// Hand-made piezo and capacitance signals with known beats and breathing, independent of
/// the NightModel, for testing the front end against exact answers.
struct SyntheticBed {
    static let fs = 500.0
    static let epoch = 1_700_000_000.0

    var duration: Double
    /// J-peak times (seconds from the start).
    var beats: [Double] = []
    var breathsPerMinute = 15.0
    var bcgAmplitude = 60_000.0
    var respirationAmplitude = 90_000.0
    var noise = 2_000.0
    /// When the sleeper lies down: no beats or breathing before.
    var start = 0.0
    /// Extra signal added sample by sample (movement, pump), given time in seconds.
    var extras: [@Sendable (Double) -> Double] = []

    init(duration: Double, heartRate: (Double) -> Double = { _ in 60 }) {
        self.duration = duration
        var t = 0.4
        while t < duration {
            beats.append(t)
            t += 60 / heartRate(t)
        }
    }

    /// The BCG complex around the J-peak at 0: H, I, J, K, L waves.
    static func complex(_ dt: Double) -> Double {
        let waves: [(Double, Double, Double)] = [(-0.08, 0.3, 0.02), (-0.04, -0.45, 0.016), (0, 1, 0.018),
                                                 (0.05, -0.75, 0.022), (0.1, 0.35, 0.025)]
        var v = 0.0
        for (c, a, w) in waves { let x = (dt - c) / w; v += a * exp(-0.5 * x * x) }
        return v
    }

    /// One channel of samples.
    func samples() -> [Int32] {
        let n = Int(duration * Self.fs)
        var out = [Double](repeating: 150_000, count: n)
        var rng: UInt64 = 0x1234_5678
        for i in 0..<n {
            let t = Double(i) / Self.fs
            if t >= start { out[i] += respirationAmplitude * sin(2 * Double.pi * breathsPerMinute / 60 * (t - start)) }
            // Cheap deterministic noise: sum of four uniforms, roughly normal.
            var u = 0.0
            for _ in 0..<4 {
                rng = rng &* 6364136223846793005 &+ 1442695040888963407
                u += Double(rng >> 11) * 0x1.0p-53 - 0.5
            }
            out[i] += noise * u * 1.73
            for e in extras { out[i] += e(t) }
        }
        for b in beats where b >= start {
            let lo = max(0, Int((b - 0.2) * Self.fs)), hi = min(n, Int((b + 0.25) * Self.fs))
            if lo < hi { for i in lo..<hi { out[i] += bcgAmplitude * Self.complex(Double(i) / Self.fs - b) } }
        }
        return out.map { Int32($0.rounded()) }
    }

    /// Mean heart rate of the beats between two times (beats per minute).
    func heartRate(from a: Double, to b: Double) -> Double {
        let inside = beats.filter { $0 >= a && $0 < b }
        return 60 * Double(inside.count - 1) / (inside.last! - inside.first!)
    }

    /// Runs the samples through a front end with occupied (or empty) capacitance, pushing
    /// `chunk` frames at a time.
    static func run(_ samples: [Int32], occupied: Bool = true, occupiedFrom: Double = 2, chunk: Int = 500,
                    config: FrontEndConfig = FrontEndConfig()) -> (FrontEndOutput, FrontEndCounters) {
        var fe = SignalFrontEnd(config: config)
        let clock = SampleClock(sampleIndex: 0, time: epoch, sampleRate: fs)
        var out = FrontEndOutput()
        var nextCap = 0.0
        var i = 0
        while i < samples.count {
            let n = min(chunk, samples.count - i)
            let end = Double(i + n) / fs
            while nextCap < end {
                // Empty-bed baseline until `occupiedFrom`, then a body if occupied.
                let load = occupied && nextCap >= occupiedFrom ? 1.0 : 0.0
                fe.pushCapacitance([Int32(1400 + 400 * load), Int32(1550 + 500 * load), Int32(1300 + 300 * load)],
                                   at: epoch + nextCap)
                nextCap += 0.5
            }
            out.append(fe.pushPiezo(Array(samples[i..<(i + n)]), channels: 1, firstSampleIndex: Int64(i), clock: clock))
            i += n
        }
        out.append(fe.finish())
        return (out, fe.counters)
    }
}

extension FrontEndOutput {
    /// The vitals of the second starting `t` seconds after the synthetic epoch.
    func second(_ t: Int) -> SecondVitals? {
        seconds.first { $0.time == SyntheticBed.epoch + Double(t) }
    }
}
