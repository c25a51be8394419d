import Foundation
import SleepDomain
import SleepAnalysis

/// What the hub knows about one side at the end of one live epoch: the forward-filtered stage
/// probabilities (the preliminary stages: each epoch sees only the past), the epoch's
/// movement and heart rate, and whether anyone is in the bed. Values that could not be
/// measured are nil, never guessed.
public struct WakeObservation: Sendable, Hashable {
    /// When the epoch ended: the earliest moment this observation exists live.
    public var time: Date
    /// Nil while the stager has nothing to say (no signal, warming up).
    public var probabilities: StageProbabilities?
    /// The epoch's mean movement index (front-end units, 0 still, roughly 0–10).
    public var movement: Double?
    /// The epoch's mean heart rate, beats per minute.
    public var heartRate: Double?
    /// Whether the side was occupied for most of the epoch.
    public var present: Bool

    public init(time: Date, probabilities: StageProbabilities?, movement: Double?, heartRate: Double?, present: Bool) {
        self.time = time
        self.probabilities = probabilities
        self.movement = movement
        self.heartRate = heartRate
        self.present = present
    }
}

/// Why the alarm fired when it did.
public enum WakeReason: String, Sendable, Hashable, Codable, CaseIterable {
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
public struct WakeDecision: Sendable, Hashable, Codable {
    public var time: Date
    public var reason: WakeReason
    /// The most likely preliminary stage at that moment (nil with no signal).
    public var stage: SleepStage?
    public var stageProbability: Double?
    public var movement: Double?
    /// Heart rate minus the night's baseline (bpm); nil without either.
    public var heartRateRise: Double?
    /// Minutes before the window's end (0 for `windowEnd`).
    public var minutesBeforeEnd: Double

    public init(time: Date, reason: WakeReason, stage: SleepStage?, stageProbability: Double?, movement: Double?,
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
    public func summary(in zone: TimeZone) -> String {
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
    /// The observation a preliminary (forward-filtered) epoch gives once it is complete.
    public init(epoch: Epoch) {
        let present = epoch.features.present
        self.init(time: Date(timeIntervalSince1970: epoch.start + epochLength),
                  probabilities: present ? epoch.probabilities : nil,
                  movement: epoch.features.movement, heartRate: epoch.features.heartRate, present: present)
    }
}
