import Foundation

/// SplitMix64 (Steele, Lea and Flood): a small, fast, well-mixed sequential generator. The
/// night model, the virtual pod's line noise and the property tests all need randomness that
/// replays the same from the same seed on every platform, so they use this, not the system's.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    @usableFromInline var state: UInt64

    public init(seed: UInt64) { state = seed }

    @inlinable
    public mutating func next() -> UInt64 {
        state &+= Self.increment
        return Self.mix(state)
    }

    /// Uniform in [0, 1).
    @inlinable
    public mutating func uniform() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform in [lo, hi).
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * uniform() }

    /// Standard normal (Box–Muller).
    public mutating func gaussian() -> Double {
        let u1 = max(uniform(), 1e-300), u2 = uniform()
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { uniform() < p }

    /// A child generator for an independent stream (per side, per purpose).
    public mutating func fork(_ salt: UInt64) -> SplitMix64 { SplitMix64(seed: next() ^ salt) }

    /// The golden-ratio step between states.
    @inlinable
    public static var increment: UInt64 { 0x9E37_79B9_7F4A_7C15 }

    /// SplitMix64's output function: a bijective 64-bit mixer, also usable as a hash of a counter.
    @inlinable @inline(__always)
    public static func mix(_ x: UInt64) -> UInt64 {
        var z = x
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
