import Foundation
import SleepDomain

/// The ballistocardiogram complex of one heartbeat as a bed sensor sees it: the body's
/// recoil to blood ejection, H-I-J-K-L(-M) waves after the R-wave, J the largest.
public enum BCGTemplate {
    /// Seconds from the heartbeat (ECG R-wave) to the J-wave peak.
    public static let jDelay = 0.25
    /// Length of the complex in seconds.
    static let length = 0.55
    /// Table resolution: samples per second (oversampled so beats land between samples).
    static let tableRate = 5000.0

    /// (time after R, amplitude, width) of each wave, J = 1.
    static let waves: [(Double, Double, Double)] = [
        (0.17, 0.30, 0.020),   // H
        (0.21, -0.45, 0.016),  // I
        (0.25, 1.00, 0.018),   // J
        (0.30, -0.75, 0.022),  // K
        (0.35, 0.35, 0.025),   // L
        (0.41, -0.15, 0.030),  // M
    ]

    /// The complex sampled at `tableRate`, starting at the R-wave.
    static let table: [Double] = {
        let n = Int(length * tableRate)
        var out = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let t = Double(i) / tableRate
            var v = 0.0
            for (c, a, w) in waves { let x = (t - c) / w; v += a * exp(-0.5 * x * x) }
            out[i] = v
        }
        return out
    }()

    /// The complex at `dt` seconds after the R-wave (0 outside the complex).
    @inline(__always)
    static func value(_ dt: Double) -> Double {
        let i = Int(dt * tableRate + 0.5)
        return i >= 0 && i < table.count ? table[i] : 0
    }
}

/// One run of the water pump: a vibration at `frequency` with two harmonics, and a
/// low-frequency thump as it starts and as it stops. It shakes the whole bed, both sides.
public struct PumpBurst: Sendable, Hashable, Codable {
    public var start: Double
    public var duration: Double
    public var frequency: Double
    public var amplitude: Double

    public var end: Double { start + duration }

    /// Thump: a damped 2.5 Hz swing lasting about a second.
    static let thumpSpan = 1.5

    @inline(__always)
    func thump(_ dt: Double) -> Double {
        guard dt >= 0, dt < Self.thumpSpan else { return 0 }
        return 1.2 * amplitude * exp(-dt / 0.35) * sin(2 * Double.pi * 2.5 * dt)
    }

    /// Vibration plus thumps at time t.
    @inline(__always)
    func value(at t: Double) -> Double {
        var v = thump(t - start) - thump(t - end)
        if t >= start && t < end {
            let ramp = min(min(t - start, end - t) / 0.4, 1)
            let p = 2 * Double.pi * frequency * (t - start)
            v += amplitude * ramp * (sin(p) + 0.5 * sin(2 * p + 0.7) + 0.25 * sin(3 * p + 1.9))
        }
        return v
    }

    static func schedule(duration: Double, noise: NoiseLevel, rng: inout SplitMix64) -> [PumpBurst] {
        var out: [PumpBurst] = []
        var t = rng.uniform(300, 1500)
        let amp: Double
        switch noise {
        case .low: amp = 30_000
        case .normal: amp = 60_000
        case .high: amp = 120_000
        }
        while t < duration {
            let d = rng.uniform(30, 120)
            out.append(PumpBurst(start: t, duration: d, frequency: rng.uniform(25, 55),
                                 amplitude: amp * rng.uniform(0.7, 1.3)))
            t += d + rng.uniform(900, 2400)
        }
        return out
    }
}
