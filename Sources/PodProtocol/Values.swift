/// Small value types shared by several messages, each with its wire encoding. The side,
/// weekday mask and `HH:mm` are the domain's own types (SleepDomain); only their bytes are here.

import SleepDomain

/// A bed side's wire byte (§5): 0 = left, 1 = right.
extension BedSide {
    public var wireValue: UInt8 { UInt8(index) }

    /// Nil for any byte but 0 and 1.
    public init?(wireValue: UInt8) {
        switch wireValue {
        case 0: self = .left
        case 1: self = .right
        default: return nil
        }
    }
}

/// The result of a request, first byte of every response payload.
public enum Status: UInt8, Sendable, Hashable, CustomStringConvertible {
    case ok = 0
    /// The pod does not know this request type.
    case unknownMessage = 1
    /// The payload is shorter than the request needs.
    case badLength = 2
    /// A field is out of range (side, HH:mm, intensity, mask …).
    case badValue = 3
    /// The pod cannot act now (e.g. writing flash); retry later.
    case busy = 4
    /// A precondition is missing (v1: no session yet, or no clock, or nothing to snooze);
    /// a v1.1 pod answers one of the three precise statuses below instead.
    case notReady = 5
    /// HELLO found no protocol version both sides speak.
    case unsupportedVersion = 6
    /// The pod failed internally (motor driver fault …).
    case internalError = 7
    /// The pod lacks the hardware for this (no second side, no motor …).
    case unsupportedFeature = 8
    /// v1.1: no session on this link yet: send HELLO (the pod may have rebooted unseen).
    case noSession = 9
    /// v1.1: the request needs a valid clock: send SET_CLOCK.
    case clockNotSet = 10
    /// v1.1: SNOOZE while no alarm of that side is vibrating.
    case nothingToSnooze = 11

    public var description: String {
        switch self {
        case .ok: "ok"
        case .unknownMessage: "unknown message"
        case .badLength: "bad length"
        case .badValue: "bad value"
        case .busy: "busy"
        case .notReady: "not ready"
        case .unsupportedVersion: "unsupported protocol version"
        case .internalError: "internal error"
        case .unsupportedFeature: "unsupported feature"
        case .noSession: "no session (send HELLO)"
        case .clockNotSet: "clock not set"
        case .nothingToSnooze: "nothing to snooze"
        }
    }
}

/// Which streams START_STREAM turns on.
public struct StreamMask: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let piezo = StreamMask(rawValue: 1 << 0)
    public static let capacitance = StreamMask(rawValue: 1 << 1)
    public static let environment = StreamMask(rawValue: 1 << 2)
    public static let log = StreamMask(rawValue: 1 << 3)
    public static let all: StreamMask = [.piezo, .capacitance, .environment, .log]
}

/// What a pod has, announced in its HELLO reply.
public struct FeatureSet: OptionSet, Sendable, Hashable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let piezo = FeatureSet(rawValue: 1 << 0)
    public static let capacitance = FeatureSet(rawValue: 1 << 1)
    public static let environment = FeatureSet(rawValue: 1 << 2)
    public static let vibrationAlarm = FeatureSet(rawValue: 1 << 3)
    public static let powerSchedule = FeatureSet(rawValue: 1 << 4)
    public static let snooze = FeatureSet(rawValue: 1 << 5)
    public static let log = FeatureSet(rawValue: 1 << 6)
    /// v1.1: the pod takes TRIGGER_ALARM (fire the alarm now).
    public static let alarmTrigger = FeatureSet(rawValue: 1 << 7)
    /// Every feature of protocol v1.
    public static let v1: FeatureSet = [.piezo, .capacitance, .environment, .vibrationAlarm,
                                        .powerSchedule, .snooze, .log]
    /// Every feature this implementation knows (v1.1).
    public static let all: FeatureSet = [.v1, .alarmTrigger]
}

/// Vibration patterns of the alarm motor.
public enum AlarmPattern: UInt8, Sendable, Hashable, CaseIterable, Codable {
    /// Two pulses, pause, repeat.
    case double = 0
    /// Intensity rises from 10 % to the set intensity over the first 30 s.
    case rise = 1
    /// Continuous at the set intensity.
    case constant = 2
}

/// Why the pod's processor last restarted (BOOT event argument).
public enum ResetReason: UInt16, Sendable, Hashable {
    case powerOn = 0
    case watchdog = 1
    case brownOut = 2
    case software = 3
    case firmwareUpdate = 4
    case resetPin = 5
}
