import Foundation

/// Deterministic randomness. The model must replay the same night from the same seed on
/// every platform, so it uses its own generators rather than the system's.

/// SplitMix64: a small, fast, well-mixed sequential generator for planning the night (and,
/// in this package, for the virtual pod's garbage bytes and the tests' textbook nights).
package struct SplitMix64: Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return NoiseHash.mix(state)
    }

    /// Uniform in [0, 1).
    mutating func uniform() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    package mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * uniform() }

    /// Standard normal (Box–Muller).
    package mutating func gaussian() -> Double {
        let u1 = max(uniform(), 1e-300), u2 = uniform()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    mutating func chance(_ p: Double) -> Bool { uniform() < p }

    /// A child generator for an independent stream (per side, per purpose).
    mutating func fork(_ salt: UInt64) -> SplitMix64 { SplitMix64(seed: next() ^ salt) }
}

/// Counter-based noise: the value for sample `i` depends only on (key, i), so a signal can be
/// generated in any chunking and still be identical.
enum NoiseHash {
    @inline(__always)
    static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An approximately standard-normal value for (key, index), from a precomputed table.
    @inline(__always)
    static func gaussian(key: UInt64, index: UInt64) -> Double {
        let h = mix(key &+ index &* 0x9E37_79B9_7F4A_7C15)
        return gaussianTable[Int(h & UInt64(gaussianTable.count - 1))]
    }

    /// Uniform in [0, 1) for (key, index).
    @inline(__always)
    static func uniform(key: UInt64, index: UInt64) -> Double {
        Double(mix(key &+ index &* 0x9E37_79B9_7F4A_7C15) >> 11) * 0x1.0p-53
    }

    /// 4096 quantiles of the standard normal distribution (inverse CDF at bin centres).
    static let gaussianTable: [Double] = {
        let n = 4096
        var table = [Double](repeating: 0, count: n)
        for i in 0..<n {
            table[i] = inverseNormalCDF((Double(i) + 0.5) / Double(n))
        }
        // Shuffle deterministically so neighbouring hash values are not correlated with order.
        var rng = SplitMix64(seed: 0x5EED)
        for i in stride(from: n - 1, to: 0, by: -1) {
            let j = Int(rng.next() % UInt64(i + 1))
            table.swapAt(i, j)
        }
        return table
    }()

    /// Acklam's rational approximation of the normal quantile (relative error < 1.2e-9).
    static func inverseNormalCDF(_ p: Double) -> Double {
        let a = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
        let b = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                 6.680131188771972e+01, -1.328068155288572e+01]
        let c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                 -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                 3.754408661907416e+00]
        let plow = 0.02425
        if p < plow {
            let q = (-2 * log(p)).squareRoot()
            return (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q+c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q+1)
        } else if p <= 1 - plow {
            let q = p - 0.5, r = q * q
            return (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r+a[5])*q / (((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r+1)
        } else {
            let q = (-2 * log(1 - p)).squareRoot()
            return -(((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q+c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q+1)
        }
    }
}
