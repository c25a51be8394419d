import Foundation
import SleepDomain

/// Deterministic randomness. The model must replay the same night from the same seed on
/// every platform, so it uses its own generators rather than the system's.

/// Counter-based noise: the value for sample `i` depends only on (key, i), so a signal can be
/// generated in any chunking and still be identical.
enum NoiseHash {
    /// An approximately standard-normal value for (key, index), from a precomputed table.
    @inline(__always)
    static func gaussian(key: UInt64, index: UInt64) -> Double {
        let h = SplitMix64.mix(key &+ index &* SplitMix64.increment)
        return gaussianTable[Int(h & UInt64(gaussianTable.count - 1))]
    }

    /// Uniform in [0, 1) for (key, index).
    @inline(__always)
    static func uniform(key: UInt64, index: UInt64) -> Double {
        Double(SplitMix64.mix(key &+ index &* SplitMix64.increment) >> 11) * 0x1.0p-53
    }

    /// 4096 quantiles of the standard normal distribution (inverse CDF at bin centres).
    static let gaussianTable: [Double] = {
        let n = 4096
        var table = [Double](repeating: 0, count: n)
        for i in 0..<n {
            table[i] = StandardNormal.quantile((Double(i) + 0.5) / Double(n))
        }
        // Shuffle deterministically so neighbouring hash values are not correlated with order.
        var rng = SplitMix64(seed: 0x5EED)
        for i in stride(from: n - 1, to: 0, by: -1) {
            let j = Int(rng.next() % UInt64(i + 1))
            table.swapAt(i, j)
        }
        return table
    }()
}
