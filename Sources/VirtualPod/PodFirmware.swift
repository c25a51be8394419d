import PodProtocol
import SleepDomain

/// The firmware side of protocol v1.1 as pure state: requests in, responses and events out,
/// timers (local minutes, alarm ends, snooze ends) fired as the tick advances.
///
/// No I/O and no real time: the engine tells it the pod's tick. That keeps every rule of
/// firmware-protocol.md §6–§7 (HELLO first, NOT_READY without a clock, the idempotent
/// retry cache, schedules evaluated on the pod's local clock) testable on its own.
struct PodFirmware: Sendable {
    /// Sent by the firmware: a response (with the request's id) or an event (id 0).
    struct Outbound: Sendable, Hashable {
        var message: Message
        var requestID: UInt16
    }

    struct PowerState: Sendable, Hashable {
        var on = false
        var level: UInt8 = 0
    }

    struct ScheduleEntry: Sendable, Hashable {
        var on: TimeOfDay
        var off: TimeOfDay
        var level: UInt8
        /// Off at or before on: the entry ends the next day (§6.2).
        var crossesMidnight: Bool { off <= on }
    }

    private struct CachedResponse: Sendable {
        var requestID: UInt16
        var request: Message
        var response: Message
    }

    static let cacheSize = 8
    static let defaultSnoozeSeconds: UInt16 = 540
    /// TRIGGER_ALARM disarms the side's alarm when it is due within this many minutes (§6.2):
    /// more than the hub's longest wake window (120 min), less than a day.
    static let triggerDisarmsMinutes = 180
    static let ticksPerSecond = UInt64(Wire.tickRate)

    let identity: PodIdentity
    private(set) var bootCount: UInt32
    /// A successful HELLO on the current link; nothing but HELLO is served before it.
    private(set) var linkReady = false
    /// The minor revision agreed in the last HELLO (0 = v1.0 hub: the v1 NOT_READY statuses).
    private(set) var linkMinor: UInt8 = 0
    /// A status the next START_STREAM requests are refused with (fault injection), nil = none.
    var refuseStream: Status?
    /// The clock the hub set; nil while the clock is not valid.
    private(set) var clock: ClockAnchor?
    /// The last clock kept after the clock was lost without a reboot: the pod can still tell
    /// when an alarm was due, and reports ALARM_FAILED (2) instead of vibrating at a guess.
    private var estimate: ClockAnchor?
    private(set) var streaming: StreamMask = []
    private(set) var power: [PowerState]
    /// Per side, per ISO weekday (index 0 = Monday).
    private(set) var entries: [[ScheduleEntry?]]
    private var lastEntry: [ScheduleEntry?]
    private(set) var alarms: [AlarmSetting?]
    private var vibratingUntil: [UInt64?]
    private var snoozedUntil: [UInt64?]
    /// Per side: the local day (days since 1970-01-01, pod local time) whose alarm a
    /// TRIGGER_ALARM disarmed (the next occurrence, if within `triggerDisarmsMinutes`).
    private var disarmedDay: [Int64?]
    /// Per side: the local day its alarm last fired at its HH:mm (at most once a day, §7.4).
    private var alarmFiredDay: [Int64?]
    /// Local minutes of day a forward clock jump (DST, a correction) passed over: they count
    /// as reached at the next minute boundary, so a skipped time fires late, once (§7.4).
    private var skippedMinutes: ClosedRange<Int>?
    private var nextMinute: UInt64?
    private var cache: [CachedResponse] = []
    /// Alarms that went off or failed, in order (kept across reboots for inspection).
    private(set) var fired: [FiredAlarm] = []
    /// Every power change with its cause (kept across reboots), for tests.
    private(set) var powerLog: [PowerChange] = []
    /// Requests answered, and how many of them came from the retry cache.
    private(set) var requestsAnswered: UInt64 = 0
    private(set) var retransmitsFromCache: UInt64 = 0
    /// Frames from the hub that are not requests (streams, responses): ignored, counted.
    private(set) var ignoredFrames: UInt64 = 0
    /// Frames the pod could not send since boot (maintained by the engine, reported in status).
    var txDropped: UInt32 = 0

    init(identity: PodIdentity) {
        self.identity = identity
        bootCount = identity.initialBootCount
        let n = identity.sides
        power = Array(repeating: PowerState(), count: n)
        entries = Array(repeating: Array(repeating: nil, count: 7), count: n)
        lastEntry = Array(repeating: nil, count: n)
        alarms = Array(repeating: nil, count: n)
        vibratingUntil = Array(repeating: nil, count: n)
        snoozedUntil = Array(repeating: nil, count: n)
        disarmedDay = Array(repeating: nil, count: n)
        alarmFiredDay = Array(repeating: nil, count: n)
    }

    // MARK: Lifecycle

    /// A reset (§7.5): clock invalid, schedules and alarms cleared, streaming stopped, link
    /// waiting for HELLO, boot count up. Returns the BOOT event for tick 0.
    mutating func reboot(reason: ResetReason) -> PodEvent {
        let keptFired = fired
        let boots = bootCount &+ 1
        let refusal = refuseStream
        self = PodFirmware(identity: identity)
        bootCount = boots
        fired = keptFired
        refuseStream = refusal
        return PodEvent(tick: 0, kind: .boot, side: nil, argument: reason.rawValue)
    }

    /// The link went away (cable pulled): a new link needs a new HELLO; state is kept.
    mutating func linkLost() {
        linkReady = false
        linkMinor = 0
        streaming = []
        cache.removeAll()
    }

    /// The clock stops being trustworthy without a reset (fault injection); see `estimate`.
    mutating func invalidateClock() {
        if let clock { estimate = clock }
        clock = nil
    }

    // MARK: Requests

    /// Answers one frame from the hub at `tick`: the response first, then any events it caused.
    mutating func handle(_ frame: DecodedFrame, tick: UInt64) -> [Outbound] {
        let type = frame.header.type
        let id = frame.header.requestID
        if type & MessageType.responseBit != 0 { ignoredFrames &+= 1; return [] }
        if let known = MessageType(rawValue: type), !known.isRequest { ignoredFrames &+= 1; return [] }
        requestsAnswered &+= 1
        // §7.2: a request already answered is not acted on again. The whole request must match,
        // so a hub that reopened the link and restarted its ids is not served stale answers.
        // v1.1: HELLO is never answered from the cache; every HELLO opens a new session.
        let isHello = type == MessageType.hello.rawValue
        if !isHello, let hit = cache.first(where: { $0.requestID == id && $0.request == frame.message }) {
            retransmitsFromCache &+= 1
            return [Outbound(message: hit.response, requestID: id)]
        }
        var events: [PodEvent] = []
        let response = respond(to: frame.message, type: type, tick: tick, events: &events)
        if !isHello { cache.append(CachedResponse(requestID: id, request: frame.message, response: response)) }
        if cache.count > Self.cacheSize { cache.removeFirst(cache.count - Self.cacheSize) }
        return [Outbound(message: response, requestID: id)] + events.map { Outbound(message: .event($0), requestID: 0) }
    }

    private func reply(_ request: MessageType, _ status: Status, _ body: ResponseBody = .none) -> Message {
        .response(Response(request: request, status: status, body: status == .ok ? body : .none))
    }

    private func hasSide(_ side: BedSide) -> Bool { side.index < identity.sides }

    /// v1.1's precise status where v1 said NOT_READY, by the minor agreed on this link.
    private func notReady(_ precise: Status) -> Status { linkMinor >= 1 ? precise : .notReady }

    private mutating func respond(to message: Message, type: UInt8, tick: UInt64, events: inout [PodEvent]) -> Message {
        switch message {
        case .unknown(let t, _):
            return .unknown(type: t | MessageType.responseBit, payload: [Status.unknownMessage.rawValue])
        case .hello(let h):
            // A fresh HELLO opens a new link session: answers cached for the old one are void.
            cache.removeAll()
            guard h.minVersion <= Wire.version, Wire.version <= h.maxVersion else {
                linkReady = false
                return reply(.hello, .unsupportedVersion)
            }
            linkReady = true
            // §7.1: every HELLO starts a new session: the stream stops until START_STREAM (clock,
            // schedules, alarms and power belong to the pod and stay).
            streaming = []
            // §5: the minor is agreed only when the hub offered one (a v1.0 hub gets a v1.0 reply).
            linkMinor = h.maxMinor.map { min($0, Wire.minorVersion) } ?? 0
            var info = podInfo(tick: tick)
            info.protocolMinor = h.maxMinor == nil ? nil : linkMinor
            return reply(.hello, .ok, .hello(info))
        default:
            break
        }
        guard let request = MessageType(rawValue: type) else {
            return .unknown(type: type | MessageType.responseBit, payload: [Status.unknownMessage.rawValue])
        }
        // §7.1 (v1.1): before HELLO every request but HELLO is answered NO_SESSION; the pod does
        // not know the hub's minor yet, and a v1.0 hub reads the unknown status as a nack too.
        if case .malformed(_, let reason) = message {
            return reply(request, request == .hello || linkReady ? reason.status : .noSession)
        }
        guard linkReady else { return reply(request, .noSession) }

        switch message {
        case .ping(let nonce):
            return reply(.ping, .ok, .pong(nonce))
        case .getStatus:
            return reply(.getStatus, .ok, .status(status(tick: tick)))
        case .setClock(let c):
            let anchor = ClockAnchor(tick: tick, unixMillis: c.unixMillis, utcOffsetMinutes: c.utcOffsetMinutes)
            if let old = clock {
                let before = LocalTime(unixMillis: old.unixMillis(atTick: tick), offsetMinutes: old.utcOffsetMinutes)
                let after = LocalTime(unixMillis: c.unixMillis, offsetMinutes: c.utcOffsetMinutes)
                let jump = after.minuteOfDay - before.minuteOfDay
                if after.dayNumber == before.dayNumber, jump > 0, jump <= 180 {
                    // The old clock's minute due at this very tick was not evaluated yet: it is passed over too.
                    let pending = nextMinute.map { $0 <= tick } ?? false
                    skippedMinutes = (before.minuteOfDay + (pending ? 0 : 1))...after.minuteOfDay
                }
            }
            clock = anchor
            estimate = nil
            nextMinute = anchor.nextMinuteTick(after: tick)
            // §7.4: a skipped time fires at the first minute after the jump, which is the minute
            // the clock jumped to (02:30 at 03:00 when 02:00 becomes 03:00), not at the next boundary.
            if skippedMinutes != nil { minuteBoundary(at: tick) { events.append($0) } }
            return reply(.setClock, .ok, .clock(anchor))
        case .setPowerSchedule(let s):
            guard hasSide(s.side), identity.features.contains(.powerSchedule) else {
                return reply(.setPowerSchedule, .unsupportedFeature)
            }
            guard clock != nil else { return reply(.setPowerSchedule, notReady(.clockNotSet)) }
            let side = s.side.index
            if s.days.isEmpty {
                entries[side] = Array(repeating: nil, count: 7)
                lastEntry[side] = nil
            } else {
                let entry = ScheduleEntry(on: s.on, off: s.off, level: s.level)
                for day in 0..<7 where s.days.contains(WeekdayMask(rawValue: 1 << UInt8(day))) {
                    entries[side][day] = entry
                }
                lastEntry[side] = entry
            }
            return reply(.setPowerSchedule, .ok)
        case .setAlarm(let a):
            guard hasSide(a.side), identity.features.contains(.vibrationAlarm) else {
                return reply(.setAlarm, .unsupportedFeature)
            }
            if a.days.isEmpty {
                clearAlarm(a.side.index, tick: tick, events: &events)
                return reply(.setAlarm, .ok)
            }
            guard a.durationSeconds >= 1, a.durationSeconds <= 3600 else { return reply(.setAlarm, .badValue) }
            guard clock != nil else { return reply(.setAlarm, notReady(.clockNotSet)) }
            // The alarm in force sent again (the hub re-sends every alarm around a DST change) is
            // not armed afresh: one that fired today stays fired, so a repeated hour rings it once.
            if let old = alarms[a.side.index], old.days == a.days, old.time == a.time {} else {
                alarmFiredDay[a.side.index] = nil
            }
            alarms[a.side.index] = a
            return reply(.setAlarm, .ok)
        case .clearAlarm(let side):
            guard hasSide(side), identity.features.contains(.vibrationAlarm) else {
                return reply(.clearAlarm, .unsupportedFeature)
            }
            clearAlarm(side.index, tick: tick, events: &events)
            return reply(.clearAlarm, .ok)
        case .snooze(let side, let seconds):
            guard hasSide(side), identity.features.contains(.snooze) else { return reply(.snooze, .unsupportedFeature) }
            let s = side.index
            guard vibratingUntil[s] != nil else { return reply(.snooze, notReady(.nothingToSnooze)) }
            let secs = seconds == 0 ? Self.defaultSnoozeSeconds : seconds
            vibratingUntil[s] = nil
            snoozedUntil[s] = tick + UInt64(secs) * Self.ticksPerSecond
            events.append(PodEvent(tick: tick, kind: .alarmSnoozed, side: side, argument: secs))
            return reply(.snooze, .ok)
        case .startStream(let mask):
            if let refused = refuseStream { return reply(.startStream, refused) }
            streaming = StreamMask(rawValue: mask.rawValue & supportedStreams.rawValue)
            return reply(.startStream, .ok)
        case .stopStream:
            streaming = []
            return reply(.stopStream, .ok)
        case .setPower(let p):
            guard hasSide(p.side) else { return reply(.setPower, .unsupportedFeature) }
            power[p.side.index] = PowerState(on: p.on, level: p.level)
            powerLog.append(PowerChange(side: p.side, on: p.on, level: Int(p.level), tick: tick, bootCount: bootCount,
                                        unixMillis: clock?.unixMillis(atTick: tick), cause: .command))
            return reply(.setPower, .ok)
        case .getSchedule(let side):
            guard hasSide(side) else { return reply(.getSchedule, .unsupportedFeature) }
            return reply(.getSchedule, .ok, .schedule(report(side: side)))
        case .triggerAlarm(let t):
            guard hasSide(t.side), identity.features.contains(.vibrationAlarm),
                  identity.features.contains(.alarmTrigger) else { return reply(.triggerAlarm, .unsupportedFeature) }
            trigger(t, tick: tick, events: &events)
            return reply(.triggerAlarm, .ok)
        default:
            // Streams and responses were filtered out before; nothing else is a request.
            return reply(request, .unknownMessage)
        }
    }

    private var supportedStreams: StreamMask {
        var m: StreamMask = []
        if identity.features.contains(.piezo) { m.insert(.piezo) }
        if identity.features.contains(.capacitance) { m.insert(.capacitance) }
        if identity.features.contains(.environment) { m.insert(.environment) }
        if identity.features.contains(.log) { m.insert(.log) }
        return m
    }

    /// §6.2 TRIGGER_ALARM: vibrate now (replacing a vibrating or snoozed alarm of the side) and
    /// disarm the side's alarm's next occurrence when it is due within 3 hours (the end of the
    /// hub's wake window, which may be after midnight); it fires as usual after that.
    private mutating func trigger(_ t: AlarmTrigger, tick: UInt64, events: inout [PodEvent]) {
        let s = t.side.index
        snoozedUntil[s] = nil
        if let anchor = clock, let alarm = alarms[s] {
            let local = LocalTime(unixMillis: anchor.unixMillis(atTick: tick), offsetMinutes: anchor.utcOffsetMinutes)
            let minutesToday = alarm.time.minuteOfDay - local.minuteOfDay
            if minutesToday > 0, alarm.days.contains(local.weekday.mask) {
                if minutesToday <= Self.triggerDisarmsMinutes { disarmedDay[s] = local.dayNumber }
            } else if minutesToday + 1440 <= Self.triggerDisarmsMinutes,
                      alarm.days.contains(local.weekday.advanced(by: 1).mask) {
                disarmedDay[s] = local.dayNumber + 1
            }
        }
        let setting = AlarmSetting(side: t.side, days: .everyDay, time: TimeOfDay(wrapping: 0), intensity: t.intensity,
                                   pattern: t.pattern, durationSeconds: t.durationSeconds)
        startAlarm(setting, side: s, at: tick, local: nil, outcome: .triggered) { events.append($0) }
    }

    private mutating func clearAlarm(_ side: Int, tick: UInt64, events: inout [PodEvent]) {
        if vibratingUntil[side] != nil || snoozedUntil[side] != nil {
            events.append(PodEvent(tick: tick, kind: .alarmStopped, side: BedSide(wireValue: UInt8(side)), argument: 2))
        }
        vibratingUntil[side] = nil
        snoozedUntil[side] = nil
        alarms[side] = nil
        disarmedDay[side] = nil
    }

    // MARK: State reports

    func podInfo(tick: UInt64) -> PodInfo {
        PodInfo(firmware: identity.firmware, sides: UInt8(identity.sides),
                piezoChannelsPerSide: UInt8(identity.channelsPerSide), sampleRate: UInt16(Wire.tickRate),
                capacitanceRateMilliHz: 2000, features: identity.features, bootCount: bootCount, tick: tick,
                serial: identity.serial)
    }

    func status(tick: UInt64) -> PodStatus {
        var powerMask: UInt8 = 0, armed: UInt8 = 0, active: UInt8 = 0
        for s in 0..<identity.sides {
            if power[s].on { powerMask |= 1 << UInt8(s) }
            if alarms[s] != nil { armed |= 1 << UInt8(s) }
            if vibratingUntil[s] != nil { active |= 1 << UInt8(s) }
        }
        return PodStatus(tick: tick, clockValid: clock != nil, unixMillis: clock?.unixMillis(atTick: tick) ?? 0,
                         utcOffsetMinutes: clock?.utcOffsetMinutes ?? 0,
                         uptimeSeconds: UInt32(clamping: tick / Self.ticksPerSecond), bootCount: bootCount,
                         streaming: streaming, powerMask: powerMask, alarmArmedMask: armed,
                         alarmActiveMask: active, framesDropped: txDropped)
    }

    /// What GET_SCHEDULE reports for a side: the most recent power entry with the days that
    /// still hold it, and the alarm.
    func report(side: BedSide) -> ScheduleReport {
        let s = side.index
        guard s < identity.sides else { return ScheduleReport(side: side, power: nil, alarm: nil) }
        var power: PowerSchedule?
        if let last = lastEntry[s] {
            var days: WeekdayMask = []
            for d in 0..<7 where entries[s][d] == last { days.insert(WeekdayMask(rawValue: 1 << UInt8(d))) }
            if !days.isEmpty {
                power = PowerSchedule(side: side, days: days, on: last.on, off: last.off, level: last.level)
            }
        }
        return ScheduleReport(side: side, power: power, alarm: alarms[s])
    }

    func isVibrating(side: Int) -> Bool { vibratingUntil.indices.contains(side) && vibratingUntil[side] != nil }

    // MARK: Timers

    /// The next tick at which a timer is due, if any.
    var nextTimer: UInt64? {
        var t = nextMinute
        for v in vibratingUntil + snoozedUntil {
            if let v { t = min(t ?? v, v) }
        }
        return t
    }

    /// Fires every timer due at or before `tick`, in tick order.
    mutating func fireTimers(through tick: UInt64, _ emit: (PodEvent) -> Void) {
        while let t = nextTimer, t <= tick {
            for s in 0..<identity.sides {
                let side = BedSide(wireValue: UInt8(s))
                if vibratingUntil[s] == t {
                    vibratingUntil[s] = nil
                    emit(PodEvent(tick: t, kind: .alarmStopped, side: side, argument: 0))
                }
                if snoozedUntil[s] == t {
                    snoozedUntil[s] = nil
                    if let a = alarms[s] { startAlarm(a, side: s, at: t, local: nil, outcome: .restartedAfterSnooze, emit) }
                }
            }
            if nextMinute == t { minuteBoundary(at: t, emit) }
        }
    }

    private mutating func startAlarm(_ a: AlarmSetting, side s: Int, at t: UInt64, local: TimeOfDay?,
                                     outcome: FiredAlarm.Outcome, _ emit: (PodEvent) -> Void) {
        vibratingUntil[s] = t + UInt64(max(a.durationSeconds, 1)) * Self.ticksPerSecond
        emit(PodEvent(tick: t, kind: .alarmStarted, side: a.side, argument: UInt16(a.intensity)))
        fired.append(FiredAlarm(side: a.side, tick: t, bootCount: bootCount,
                                unixMillis: clock?.unixMillis(atTick: t),
                                localTime: local, outcome: outcome))
    }

    /// One local minute hh:mm:00: alarms first (they matter most), then power changes.
    private mutating func minuteBoundary(at t: UInt64, _ emit: (PodEvent) -> Void) {
        guard let anchor = clock ?? estimate else { nextMinute = nil; return }
        nextMinute = anchor.nextMinuteTick(after: t)
        let local = LocalTime(unixMillis: anchor.unixMillis(atTick: t), offsetMinutes: anchor.utcOffsetMinutes)
        let today = local.weekday.mask
        let yesterdayIndex = local.weekday.advanced(by: -1).rawValue  // index 0 = Monday
        let todayIndex = local.weekday.rawValue
        let now = TimeOfDay(wrapping: local.minuteOfDay)
        let skipped = skippedMinutes
        skippedMinutes = nil
        /// Reached now: this minute, or passed over by the last forward jump.
        func reached(_ time: TimeOfDay) -> Bool { time == now || skipped?.contains(time.minuteOfDay) == true }
        for s in 0..<identity.sides {
            let side = BedSide(wireValue: UInt8(s))!
            if let a = alarms[s], a.days.contains(today), reached(a.time), disarmedDay[s] != local.dayNumber,
               alarmFiredDay[s] != local.dayNumber {
                alarmFiredDay[s] = local.dayNumber  // a repeated hour does not fire it twice
                if clock != nil {
                    snoozedUntil[s] = nil
                    startAlarm(a, side: s, at: t, local: now, outcome: .started, emit)
                } else {
                    emit(PodEvent(tick: t, kind: .alarmFailed, side: side, argument: 2))
                    fired.append(FiredAlarm(side: side, tick: t, bootCount: bootCount, unixMillis: nil,
                                            localTime: now, outcome: .failedClockInvalid))
                }
            }
            guard clock != nil else { continue }
            let onEntry = entries[s][todayIndex].flatMap { reached($0.on) ? $0 : nil }
            var offDue = false
            if let e = entries[s][todayIndex], !e.crossesMidnight, reached(e.off) { offDue = true }
            if let e = entries[s][yesterdayIndex], e.crossesMidnight, reached(e.off) { offDue = true }
            if let e = onEntry {
                if !power[s].on || power[s].level != e.level {
                    power[s] = PowerState(on: true, level: e.level)
                    powerLog.append(PowerChange(side: side, on: true, level: Int(e.level), tick: t, bootCount: bootCount,
                                                unixMillis: clock?.unixMillis(atTick: t), cause: .schedule))
                    emit(PodEvent(tick: t, kind: .powerOn, side: side, argument: UInt16(e.level)))
                }
            } else if offDue, power[s].on {
                power[s].on = false
                powerLog.append(PowerChange(side: side, on: false, level: 0, tick: t, bootCount: bootCount,
                                            unixMillis: clock?.unixMillis(atTick: t), cause: .schedule))
                emit(PodEvent(tick: t, kind: .powerOff, side: side, argument: 0))
            }
        }
    }
}

/// An alarm the virtual pod set off, or could not (no valid clock), for tests to check.
package struct FiredAlarm: Sendable, Hashable {
    package enum Outcome: Sendable, Hashable {
        /// ALARM_STARTED at the alarm's HH:mm.
        case started
        /// ALARM_STARTED again at the end of a snooze.
        case restartedAfterSnooze
        /// ALARM_FAILED (argument 2): due while the clock was not valid.
        case failedClockInvalid
        /// ALARM_STARTED by TRIGGER_ALARM (v1.1), at the hub's request.
        case triggered
    }
    package var side: BedSide
    /// The pod's tick when it happened (in the boot `bootCount`).
    package var tick: UInt64
    package var bootCount: UInt32
    /// The pod's UTC time then; nil when its clock was not valid.
    package var unixMillis: Int64?
    /// The local HH:mm it was due at (nil for a restart after a snooze).
    package var localTime: TimeOfDay?
    package var outcome: Outcome
}
