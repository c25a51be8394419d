import Foundation

/// Which pod setting a command replaces; acks, nacks and timeouts are matched by this key.
public enum ScheduleCommandKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    case clock
    case powerSchedule(BedSide)
    case alarm(BedSide)

    /// Send order: the clock first (the pod fires local times on it), then power, then alarms.
    var rank: Int {
        switch self {
        case .clock: return 0
        case .powerSchedule(let s): return 1 + (s == .left ? 0 : 1)
        case .alarm(let s): return 3 + (s == .left ? 0 : 1)
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }

    public var description: String {
        switch self {
        case .clock: return "set-clock"
        case .powerSchedule(let s): return "set-power-schedule(\(s))"
        case .alarm(let s): return "set-alarm(\(s))"
        }
    }
}

/// What set-clock carries besides the current UTC time, which the command client stamps at
/// the moment it sends (so a queued command never carries a stale time).
public struct ClockSetting: Hashable, Sendable, Codable {
    /// The pod's zone (for logs; the pod itself only needs the offsets).
    public var timeZoneIdentifier: String
    /// Local time = UTC + this, valid now.
    public var utcOffsetSeconds: Int
    /// The zone's next offset change and the offset after it, so the pod can switch on time
    /// even while the hub is away. The hub re-syncs the clock at the change anyway.
    public var nextTransition: Date?
    public var utcOffsetAfterTransition: Int?

    public init(timeZoneIdentifier: String, utcOffsetSeconds: Int, nextTransition: Date?, utcOffsetAfterTransition: Int?) {
        self.timeZoneIdentifier = timeZoneIdentifier
        self.utcOffsetSeconds = utcOffsetSeconds
        self.nextTransition = nextTransition
        self.utcOffsetAfterTransition = utcOffsetAfterTransition
    }

    /// The setting for `zone` at `now`.
    public init(zone: TimeZone, at now: Date) {
        let next = zone.nextDaylightSavingTimeTransition(after: now)
        self.init(timeZoneIdentifier: zone.identifier, utcOffsetSeconds: zone.secondsFromGMT(for: now),
                  nextTransition: next, utcOffsetAfterTransition: next.map { zone.secondsFromGMT(for: $0) })
    }
}

/// A command the hub must send to the pod.
public enum ScheduleCommand: Hashable, Sendable {
    case setClock(ClockSetting)
    case setPowerSchedule(BedSide, [PowerWindow])
    /// An empty list disables the side's alarm.
    case setAlarm(BedSide, [AlarmEntry])

    public var key: ScheduleCommandKey {
        switch self {
        case .setClock: return .clock
        case .setPowerSchedule(let side, _): return .powerSchedule(side)
        case .setAlarm(let side, _): return .alarm(side)
        }
    }
}

/// What the pod should hold: its zone and one schedule per side (a missing side is left alone).
public struct DesiredPodState: Hashable, Sendable {
    public var timeZone: TimeZone
    public var schedules: [PodSchedule]

    public init(timeZone: TimeZone, schedules: [PodSchedule]) {
        self.timeZone = timeZone
        self.schedules = schedules
    }

    /// The commands that express this state at `now`, in send order.
    public func commands(at now: Date) -> [ScheduleCommand] {
        var list: [ScheduleCommand] = [.setClock(ClockSetting(zone: timeZone, at: now))]
        for s in schedules.sorted(by: { $0.side < $1.side }) { list.append(.setPowerSchedule(s.side, s.powerWindows)) }
        for s in schedules.sorted(by: { $0.side < $1.side }) { list.append(.setAlarm(s.side, s.alarms)) }
        return list
    }
}

/// Inputs to the push policy. Every event comes with the current time (`handle(_:now:)`).
public enum PushEvent: Hashable, Sendable {
    /// The pod is connected and its handshake done (first connect or any reconnect).
    case connected
    case disconnected
    /// The pod said it booted (HELLO with a boot flag, or a reset reported): it lost its clock
    /// and may have lost its schedule.
    case podRebooted
    /// The pod reported its clock (status or handshake); far from `now` means it was reset.
    case podClockReported(Date)
    /// The hub's own clock was stepped (NTP jump, manual set).
    case hubClockChanged
    /// The schedule service computed a new desired state (or the pod's zone changed).
    case desiredChanged(DesiredPodState)
    /// Answers to the command in flight with this key.
    case acknowledged(ScheduleCommandKey)
    case rejected(ScheduleCommandKey, status: Int)
    case timedOut(ScheduleCommandKey)
    /// Time passed (the driver calls this at the instants `wakeUp(at:)` asked for).
    case tick
}

/// Why a command was given up on.
public enum PushFailureReason: Hashable, Sendable, CustomStringConvertible {
    case rejected(status: Int)
    case timedOut

    public var description: String {
        switch self {
        case .rejected(let status): return "rejected with status \(status)"
        case .timedOut: return "no answer"
        }
    }
}

/// Outputs of the push policy, to be carried out by the daemon in order.
public enum PushAction: Hashable, Sendable {
    /// Send this command now (attempt 1 is the first try). Wait for its answer before the next.
    case send(ScheduleCommand, attempt: Int)
    /// Deliver a `.tick` at this instant (retry backoff, answer timeout, DST pre-push or re-sync).
    /// Each action list carries at most one; it replaces any earlier request.
    case wakeUp(at: Date)
    /// Retries exhausted: record and report. Not retried until the desired value changes, the pod
    /// reconnects or reboots, the zone or clock changes, or a DST pre-push comes round.
    case failed(ScheduleCommand, reason: PushFailureReason, attempts: Int)
    /// Everything desired is acknowledged (reported once per convergence).
    case inSync
}

/// Timing and retry limits of the push policy.
public struct PushPolicyConfiguration: Hashable, Sendable, Codable {
    /// Retries after the first attempt before reporting failure.
    public var maxRetries: Int = 3
    /// First retry after this many seconds, doubling on each further retry.
    public var retryDelaySeconds: Double = 5
    /// An unanswered command counts as timed out after this long.
    public var answerTimeoutSeconds: Double = 10
    /// Power schedules and alarms are pushed again this long before each DST transition.
    public var preTransitionLeadSeconds: Double = 15 * 60
    /// A reported pod clock further than this from the hub's counts as reset.
    public var clockToleranceSeconds: Double = 120

    public init() {}
}
