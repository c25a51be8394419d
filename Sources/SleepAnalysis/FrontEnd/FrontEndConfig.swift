/// Tunable constants of the signal front end. Defaults suit the pod's scale (piezo gain
/// 400: an occupied bed swings hundreds of thousands of counts; capacitance ~1–2 thousand
/// counts per channel, a body adding several hundred).
package struct FrontEndConfig: Sendable, Hashable, Codable {
    /// Piezo samples per second per channel.
    package var sampleRate: Double = 500
    /// Physiological limits: outside them an estimate is `.none(.implausible)`.
    package var heartRateLimits: ClosedRange<Double> = 30...200
    package var breathingRateLimits: ClosedRange<Double> = 4...40
    /// Seconds of data after a second before that second's vitals are emitted (the
    /// estimation windows are centred, so this is the live latency).
    package var lookahead: Int = 8
    /// Half-window of the heart-rate estimate (beats from s−4 … s+5).
    package var heartWindowBefore: Double = 4
    package var heartWindowAfter: Double = 5
    /// Breathing window (breaths from s−24 … s+6).
    package var breathWindowBefore: Double = 24
    package var breathWindowAfter: Double = 6
    /// RR intervals further than this fraction from the window median are discarded.
    package var rrTolerance: Double = 0.2
    /// Breath intervals further than this fraction from the window median are discarded.
    package var breathTolerance: Double = 0.4
    /// Capacitance: sum of the channels above the empty-bed baseline to enter / to leave.
    package var capacitanceEnter: Double = 400
    package var capacitanceLeave: Double = 250
    /// Readings (seconds) the capacitance must stay above enter / below leave to switch.
    package var capacitanceEnterSeconds: Int = 2
    package var capacitanceLeaveSeconds: Int = 3
    /// Seconds a capacitance reading stays current (readings come about once a second).
    package var capacitanceFreshSeconds: Int = 5
    /// Seconds without capacitance readings for which the last capacitance decision holds
    /// before the piezo alone decides. Lost frames (a hub that falls behind makes the pod drop
    /// them) are no evidence of a change, and the piezo is the weaker witness exactly then
    /// (its filters restart after every lost stretch of samples). The hub's end-to-end test
    /// saw an empty side briefly "in bed" on a loaded machine, where the pod drops frames.
    package var capacitanceHoldSeconds: Int = 60
    /// Piezo body-band RMS (counts) for presence without capacitance: enter above, leave below.
    package var piezoEnter: Double = 35_000
    package var piezoLeave: Double = 15_000
    /// Seconds the piezo level must hold to switch; with capacitance present but reading
    /// empty, the piezo alone needs `piezoOverrideSeconds` (a mis-learnt baseline).
    package var piezoEnterSeconds: Int = 10
    package var piezoLeaveSeconds: Int = 15
    package var piezoOverrideSeconds: Int = 60
    /// Movement index above which a second counts as movement (beats and breaths dropped).
    package var movementGate: Double = 2.5
    /// Pump detection: vibration-band RMS over this multiple of its quiet baseline, and over
    /// an absolute floor (counts).
    package var pumpOnRatio: Double = 4
    package var pumpOffRatio: Double = 2
    package var pumpFloor: Double = 3_000
    /// Sample gaps up to this many samples are bridged by holding the last value; longer
    /// gaps reset the filters and no beat interval spans them.
    package var maxBridgedGap: Int = 25
    /// Seconds without any piezo data up to which the front end still emits (no-reading)
    /// seconds; longer gaps are skipped.
    package var maxEmittedGap: Int = 60

    package init() {}
}
