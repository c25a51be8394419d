/// Exponential backoff with jitter between upload attempts. Pure.
///
/// The ceiling for attempt n (1-based) is `min(cap, base * 2^(n-1))`; the delay is drawn
/// uniformly from the upper half of it ("equal jitter"), so retries of many sessions spread
/// out yet never fire immediately.
package struct BackoffPolicy: Sendable, Hashable {
    package var baseSeconds: Int64
    package var capSeconds: Int64

    package init(baseSeconds: Int64 = 30, capSeconds: Int64 = 6 * 3600) {
        self.baseSeconds = max(1, baseSeconds)
        self.capSeconds = max(self.baseSeconds, capSeconds)
    }

    /// Upper bound of the delay after failed attempt `attempt` (1 = first attempt).
    package func ceiling(afterAttempt attempt: Int) -> Int64 {
        let exponent = min(max(attempt, 1) - 1, 40)
        let (scaled, overflow) = baseSeconds.multipliedReportingOverflow(by: Int64(1) << exponent)
        return overflow ? capSeconds : min(capSeconds, scaled)
    }

    /// Delay in seconds after failed attempt `attempt`, with `unit` a random number in [0, 1).
    package func delay(afterAttempt attempt: Int, unit: Double) -> Int64 {
        let ceiling = ceiling(afterAttempt: attempt)
        let half = ceiling / 2
        let u = unit.isFinite ? min(max(unit, 0), 1) : 0
        return max(1, ceiling - half + Int64((Double(half) * u).rounded(.down)))
    }
}

/// Source of the jitter, injectable so tests are deterministic.
package protocol JitterSource: Sendable {
    /// A number in [0, 1).
    func unit() -> Double
}

/// System randomness.
package struct SystemJitter: JitterSource {
    package init() {}
    package func unit() -> Double { Double.random(in: 0..<1) }
}
