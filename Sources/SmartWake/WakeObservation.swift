import Foundation
import SleepDomain
import SleepAnalysis

/// What the hub knows about one side at the end of one live epoch: the forward-filtered stage
/// probabilities (the preliminary stages: each epoch sees only the past), the epoch's
/// movement and heart rate, and whether anyone is in the bed. Values that could not be
/// measured are nil, never guessed.
package struct WakeObservation: Sendable, Hashable {
    /// When the epoch ended: the earliest moment this observation exists live.
    package var time: Date
    /// Nil while the stager has nothing to say (no signal, warming up).
    package var probabilities: StageProbabilities?
    /// The epoch's mean movement index (front-end units, 0 still, roughly 0–10).
    package var movement: Double?
    /// The epoch's mean heart rate, beats per minute.
    package var heartRate: Double?
    /// Whether the side was occupied for most of the epoch.
    package var present: Bool

    package init(time: Date, probabilities: StageProbabilities?, movement: Double?, heartRate: Double?, present: Bool) {
        self.time = time
        self.probabilities = probabilities
        self.movement = movement
        self.heartRate = heartRate
        self.present = present
    }
}

/// Why the alarm fired when it did.
package enum WakeReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// Light (core) sleep, confidently and for consecutive epochs.
    case lightSleep = "light_sleep"
    /// Already awake, and moving.
    case awakeMoving = "awake_moving"
    /// Light sleep or awake, moving, with the heart rate risen above the night's baseline: an arousal.
    case arousal
    /// No good moment came (deep sleep, REM, no signal): the pod's own alarm at the window's end.
    case windowEnd = "window_end"
}

/// The moment the decider chose and what it saw then, for the store, the bus and the summary.
package struct WakeDecision: Sendable, Hashable, Codable {
    package var time: Date
    package var reason: WakeReason
    /// The most likely preliminary stage at that moment (nil with no signal).
    package var stage: SleepStage?
    package var stageProbability: Double?
    package var movement: Double?
    /// Heart rate minus the night's baseline (bpm); nil without either.
    package var heartRateRise: Double?
    /// Minutes before the window's end (0 for `windowEnd`).
    package var minutesBeforeEnd: Double

    package init(time: Date, reason: WakeReason, stage: SleepStage?, stageProbability: Double?, movement: Double?,
                heartRateRise: Double?, minutesBeforeEnd: Double) {
        self.time = time
        self.reason = reason
        self.stage = stage
        self.stageProbability = stageProbability
        self.movement = movement
        self.heartRateRise = heartRateRise
        self.minutesBeforeEnd = minutesBeforeEnd
    }

    /// One line for logs and the demo: "06:41:30 light_sleep (core 0.82, movement 0.4, +3 bpm), 19 min early".
    package func summary(in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.hour, .minute, .second], from: time)
        func two(_ v: Int?) -> String { let v = v ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        var parts: [String] = []
        if let stage { parts.append("\(stage.rawValue) \(fixed(stageProbability ?? 0, 2))") }
        if let movement { parts.append("movement \(fixed(movement, 2))") }
        if let heartRateRise { parts.append("\(heartRateRise >= 0 ? "+" : "")\(fixed(heartRateRise, 1)) bpm") }
        let detail = parts.isEmpty ? "no signal" : parts.joined(separator: ", ")
        return "\(two(c.hour)):\(two(c.minute)):\(two(c.second)) \(reason.rawValue) (\(detail)), "
            + "\(fixed(minutesBeforeEnd, 1)) min before the window's end"
    }
}

/// Fixed-point text without locale-dependent formatters.
func fixed(_ v: Double, _ decimals: Int) -> String {
    guard v.isFinite else { return "nan" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(v) * scale).rounded()
    let whole = Int(scaled / scale)
    var s = (v < 0 && scaled != 0 ? "-" : "") + String(whole)
    if decimals > 0 {
        var f = String(Int(scaled - Double(whole) * scale))
        while f.count < decimals { f = "0" + f }
        s += "." + f
    }
    return s
}

extension WakeObservation {
    /// The same epoch with the side seen empty since (the bed emptied before it could be
    /// acted on): no stage, so the decider's empty-bed veto applies.
    package var withBedEmpty: WakeObservation {
        WakeObservation(time: time, probabilities: nil, movement: movement, heartRate: heartRate, present: false)
    }

    /// The observation a preliminary (forward-filtered) epoch gives once it is complete.
    package init(epoch: Epoch) {
        let present = epoch.features.present
        self.init(time: Date(timeIntervalSince1970: epoch.start + epochLength),
                  probabilities: present ? epoch.probabilities : nil,
                  movement: epoch.features.movement, heartRate: epoch.features.heartRate, present: present)
    }
}
