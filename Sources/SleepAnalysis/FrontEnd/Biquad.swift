import Foundation

/// A second-order IIR section (RBJ cookbook, transposed direct form II). Cascades of these
/// are the front end's filters: a few multiply-adds per sample, no FFT, O(1) memory.
struct Biquad: Sendable {
    private var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    private var z1 = 0.0, z2 = 0.0

    /// Butterworth Q for a single 2nd-order section.
    static let butterworthQ = 0.5.squareRoot()
    /// Q of the two sections of a 4th-order Butterworth.
    static let butterworth4Q = (0.541_196_100_146_197, 1.306_562_964_876_376_7)

    static func lowPass(cutoff: Double, sampleRate: Double, q: Double = butterworthQ) -> Biquad {
        let w = 2 * Double.pi * cutoff / sampleRate, c = cos(w), alpha = sin(w) / (2 * q)
        return Biquad(normalising: (1 - c) / 2, 1 - c, (1 - c) / 2, 1 + alpha, -2 * c, 1 - alpha)
    }

    static func highPass(cutoff: Double, sampleRate: Double, q: Double = butterworthQ) -> Biquad {
        let w = 2 * Double.pi * cutoff / sampleRate, c = cos(w), alpha = sin(w) / (2 * q)
        return Biquad(normalising: (1 + c) / 2, -(1 + c), (1 + c) / 2, 1 + alpha, -2 * c, 1 - alpha)
    }

    private init(normalising b0: Double, _ b1: Double, _ b2: Double, _ a0: Double, _ a1: Double, _ a2: Double) {
        self.b0 = b0 / a0; self.b1 = b1 / a0; self.b2 = b2 / a0
        self.a1 = a1 / a0; self.a2 = a2 / a0
    }

    @inline(__always)
    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + z1
        z1 = b1 * x - a1 * y + z2
        z2 = b2 * x - a2 * y
        return y
    }

    /// Put the filter in its steady state for a constant input `x` (no start-up transient).
    mutating func settle(at x: Double) {
        // Steady state output y = H(1)·x; solve the state equations for z1, z2.
        let dc = (b0 + b1 + b2) / (1 + a1 + a2)
        let y = dc * x
        z2 = b2 * x - a2 * y
        z1 = b1 * x - a1 * y + z2
    }

    mutating func reset() { z1 = 0; z2 = 0 }
}
