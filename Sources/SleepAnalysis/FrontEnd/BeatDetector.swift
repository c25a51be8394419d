/// Finds heartbeats in the cardiac band (100 Hz): the squared signal is smoothed into an
/// energy envelope with one lump per BCG complex (H…L waves merged), and a beat is a
/// local maximum of that envelope that is the largest within a refractory span and at
/// least a fraction of the recent beats' height. The span is 0.6 of the recent median RR
/// interval, clamped to 0.27…0.75 s (so at most ~220 per minute; a lock at half the true
/// rate cannot hold because the span never covers a whole true interval). The beat time is
/// then refined to the J-wave itself: the extreme of the cardiac band, of the polarity the
/// recent beats showed, in the 200 ms before to 50 ms after the envelope peak, interpolated
/// between samples. O(1) per sample.
struct BeatDetector: Sendable {
    /// Shortest and longest refractory span, seconds.
    static let minSeparation = 0.27
    static let maxSeparation = 0.75
    /// A beat must reach this fraction of the median recent beat energy.
    static let relativeThreshold = 0.3

    private var smoother: Biquad
    private var e1 = 0.0, e2 = 0.0, t1 = 0.0
    private var samples = 0
    private var candidate: (t: Double, v: Double)?
    /// Energies of the last accepted beats (median sets the threshold).
    private var heights: [Double] = []
    private var lastAccepted = -Double.infinity
    /// Recent plausible RR intervals (median sets the refractory span).
    private var intervals: [Double] = []
    private var separation = minSeparation
    private let dt: Double
    /// The last 128 cardiac-band samples and their times (1.28 s at 100 Hz).
    private var ring = [Double](repeating: 0, count: 128)
    private var ringTime = [Double](repeating: -Double.infinity, count: 128)
    private var ringPos = 0
    /// Running sign of the J-wave (+ if beats peak upward).
    private var polarity = 0.0

    init(sampleRate: Double) {
        dt = 1 / sampleRate
        smoother = Biquad.lowPass(cutoff: 4, sampleRate: sampleRate)
    }

    mutating func reset() {
        smoother.reset()
        e1 = 0; e2 = 0; samples = 0
        for i in ringTime.indices { ringTime[i] = -Double.infinity }
        candidate = nil
        lastAccepted = -Double.infinity
        intervals.removeAll()
        separation = Self.minSeparation
    }

    /// Feed one cardiac-band sample at time `t`; returns a beat (time, envelope height)
    /// once it is confirmed, which is `separation` seconds after its peak.
    @inline(__always)
    mutating func process(_ c: Double, at t: Double) -> (t: Double, v: Double)? {
        let e = smoother.process(c * c)
        samples += 1
        ring[ringPos] = c
        ringTime[ringPos] = t
        ringPos = (ringPos + 1) & 127
        var found: (t: Double, v: Double)? = nil
        if samples >= 3 && e1 > e2 && e1 >= e {
            // Parabolic refinement of the peak time.
            let denom = e2 - 2 * e1 + e
            let offset = denom < 0 ? 0.5 * (e2 - e) / denom : 0
            let peak = (t: t1 + offset * dt, v: e1)
            if let c = candidate {
                if peak.t - c.t < separation {
                    if peak.v > c.v { candidate = peak }
                } else {
                    found = finalize(c, now: t)
                    candidate = peak
                }
            } else {
                candidate = peak
            }
        }
        if found == nil, let c = candidate, t - c.t >= separation {
            found = finalize(c, now: t)
            candidate = nil
        }
        e2 = e1; e1 = e; t1 = t
        return found
    }

    private mutating func finalize(_ c: (t: Double, v: Double), now: Double) -> (t: Double, v: Double)? {
        let level = median(heights)
        if heights.count < 3 || c.v >= Self.relativeThreshold * level {
            heights.append(c.v)
            if heights.count > 9 { heights.removeFirst() }
            let rr = c.t - lastAccepted
            if rr >= 0.3 && rr <= 2 {
                intervals.append(rr)
                if intervals.count > 8 { intervals.removeFirst() }
                if intervals.count >= 4 {
                    separation = min(max(0.6 * median(intervals), Self.minSeparation), Self.maxSeparation)
                }
            }
            lastAccepted = c.t
            return (refine(c.t), c.v)
        }
        // Nothing accepted for a while: the level is stale (posture change, quieter signal).
        if now - lastAccepted > 2.5 {
            for i in heights.indices { heights[i] *= 0.7 }
            separation = Self.minSeparation
        }
        return nil
    }

    /// The J-wave time near an envelope peak at `t` (falls back to `t`).
    private mutating func refine(_ t: Double) -> Double {
        var hi = -Double.infinity, hiK = -1, lo = Double.infinity, loK = -1
        for k in 0..<128 where ringTime[k] >= t - 0.2 && ringTime[k] <= t + 0.05 {
            if ring[k] > hi { hi = ring[k]; hiK = k }
            if ring[k] < lo { lo = ring[k]; loK = k }
        }
        guard hiK >= 0, loK >= 0 else { return t }
        polarity += ((hi >= -lo ? 1.0 : -1.0) - polarity) * 0.05
        let k = polarity >= 0 ? hiK : loK
        let km = (k + 127) & 127, kp = (k + 1) & 127
        guard ringTime[km] < ringTime[k], ringTime[kp] > ringTime[k] else { return ringTime[k] }
        let y0 = ring[km], y1 = ring[k], y2 = ring[kp]
        let denom = y0 - 2 * y1 + y2
        let offset = denom != 0 ? min(max(0.5 * (y0 - y2) / denom, -0.5), 0.5) : 0
        return ringTime[k] + offset * dt
    }

    private func median(_ a: [Double]) -> Double {
        guard !a.isEmpty else { return 0 }
        let s = a.sorted()
        return s[s.count / 2]
    }
}

/// Finds breaths in the respiratory band (10 Hz): a breath starts at an upward zero
/// crossing that is confirmed by the signal then rising above a hysteresis level (30% of
/// the running RMS), so noise around zero does not count as breaths.
struct BreathDetector: Sendable {
    private var meanSquare = 0.0
    private var n = 0
    private var state = 0
    private var lastR = 0.0, lastT = 0.0
    private var zeroUp: Double?

    mutating func reset() {
        meanSquare = 0; n = 0; state = 0; lastR = 0; lastT = 0; zeroUp = nil
    }

    /// Feed one respiratory-band sample; returns the time of a confirmed breath start.
    mutating func process(_ r: Double, at t: Double) -> Double? {
        n += 1
        let alpha = max(1.0 / 200, 1.0 / Double(n))
        meanSquare += (r * r - meanSquare) * alpha
        let h = 0.3 * meanSquare.squareRoot()
        var out: Double? = nil
        if n > 1 && lastR < 0 && r >= 0 {
            let f = r - lastR != 0 ? -lastR / (r - lastR) : 0
            zeroUp = lastT + f * (t - lastT)
        }
        if state <= 0 && r > h {
            if state < 0, let z = zeroUp { out = z }
            state = 1
        } else if state >= 0 && r < -h {
            state = -1
        }
        lastR = r; lastT = t
        return out
    }
}
