import SleepDomain

/// Every message of protocol v1.1 as a Swift value (byte tables in firmware-protocol.md §6).

/// A decoded message. Unknown types are kept (not dropped) so a receiver can count and
/// log them; known types whose payload cannot be read arrive as `.malformed` so the pod
/// can answer them with `badLength`/`badValue` instead of staying silent.
public enum Message: Sendable, Hashable {
    // Requests, hub → pod
    case hello(HelloRequest)
    case ping(nonce: [UInt8])
    case getStatus
    case setClock(ClockSetting)
    case setPowerSchedule(PowerSchedule)
    case setAlarm(AlarmSetting)
    case clearAlarm(side: BedSide)
    case snooze(side: BedSide, seconds: UInt16)
    case startStream(StreamMask)
    case stopStream
    case setPower(PowerCommand)
    case getSchedule(side: BedSide)
    case triggerAlarm(AlarmTrigger)
    // The one response to a request, pod → hub
    case response(Response)
    // Streams and events, pod → hub
    case piezo(PiezoBlock)
    case capacitance(CapacitanceReading)
    case environment(EnvironmentReading)
    case event(PodEvent)
    case log(LogLine)
    // What a receiver could not read
    case unknown(type: UInt8, payload: [UInt8])
    case malformed(type: UInt8, reason: PayloadError)

    /// The type code this message travels under.
    public var typeCode: UInt8 {
        switch self {
        case .hello: MessageType.hello.rawValue
        case .ping: MessageType.ping.rawValue
        case .getStatus: MessageType.getStatus.rawValue
        case .setClock: MessageType.setClock.rawValue
        case .setPowerSchedule: MessageType.setPowerSchedule.rawValue
        case .setAlarm: MessageType.setAlarm.rawValue
        case .clearAlarm: MessageType.clearAlarm.rawValue
        case .snooze: MessageType.snooze.rawValue
        case .startStream: MessageType.startStream.rawValue
        case .stopStream: MessageType.stopStream.rawValue
        case .setPower: MessageType.setPower.rawValue
        case .getSchedule: MessageType.getSchedule.rawValue
        case .triggerAlarm: MessageType.triggerAlarm.rawValue
        case .response(let r): r.request.responseCode
        case .piezo: MessageType.piezo.rawValue
        case .capacitance: MessageType.capacitance.rawValue
        case .environment: MessageType.environment.rawValue
        case .event: MessageType.event.rawValue
        case .log: MessageType.log.rawValue
        case .unknown(let type, _): type
        case .malformed(let type, _): type
        }
    }
}

/// Why a known message's payload could not be read.
public enum PayloadError: Error, Sendable, Hashable {
    /// Shorter than the fixed fields (or a declared count) need.
    case truncated(needed: Int, got: Int)
    /// A field holds a value outside its range.
    case invalidValue(field: String)

    /// The status a pod answers a malformed request with.
    public var status: Status {
        switch self {
        case .truncated: .badLength
        case .invalidValue: .badValue
        }
    }
}

/// HELLO request: the protocol versions the hub speaks.
public struct HelloRequest: Sendable, Hashable {
    public var minVersion: UInt8
    public var maxVersion: UInt8
    /// v1.1: the highest minor revision of `maxVersion` the hub speaks; nil = field absent
    /// (a v1.0 hub), which a pod takes as minor 0.
    public var maxMinor: UInt8?
    public init(minVersion: UInt8 = Wire.version, maxVersion: UInt8 = Wire.version, maxMinor: UInt8? = nil) {
        self.minVersion = minVersion
        self.maxVersion = maxVersion
        self.maxMinor = maxMinor
    }
}

/// What a pod is: the body of the HELLO response.
public struct PodInfo: Sendable, Hashable {
    /// The protocol version the pod chose within the hub's range.
    public var protocolVersion: UInt8
    public var firmware: FirmwareVersion
    public var sides: UInt8
    public var piezoChannelsPerSide: UInt8
    /// Piezo samples per second per channel (500 on v1 pods).
    public var sampleRate: UInt16
    /// Capacitance readings per second per side, in millihertz (2000 = 2 Hz).
    public var capacitanceRateMilliHz: UInt16
    public var features: FeatureSet
    /// Increments at every boot; a change tells the hub the pod restarted.
    public var bootCount: UInt32
    /// The pod's tick counter (500 Hz since boot) when it answered.
    public var tick: UInt64
    /// USB serial number, ASCII, at most 32 bytes; also the pod's identity in the store.
    public var serial: String
    /// v1.1: the minor revision the pod chose (≤ the hub's `maxMinor`); nil = field absent
    /// (a v1.0 pod, or a hub that offered no minor), taken as 0.
    public var protocolMinor: UInt8?

    /// The minor revision in force on the link (0 when the pod did not say).
    public var minor: UInt8 { protocolMinor ?? 0 }

    /// The protocol in force on the link as people write it: "v1.1", "v1.0".
    public var protocolDescription: String { "v\(protocolVersion).\(minor)" }

    public init(protocolVersion: UInt8 = Wire.version, firmware: FirmwareVersion, sides: UInt8,
                piezoChannelsPerSide: UInt8, sampleRate: UInt16, capacitanceRateMilliHz: UInt16,
                features: FeatureSet, bootCount: UInt32, tick: UInt64, serial: String, protocolMinor: UInt8? = nil) {
        self.protocolMinor = protocolMinor
        self.protocolVersion = protocolVersion
        self.firmware = firmware
        self.sides = sides
        self.piezoChannelsPerSide = piezoChannelsPerSide
        self.sampleRate = sampleRate
        self.capacitanceRateMilliHz = capacitanceRateMilliHz
        self.features = features
        self.bootCount = bootCount
        self.tick = tick
        self.serial = serial
    }
}

public struct FirmwareVersion: Sendable, Hashable, CustomStringConvertible {
    public var major: UInt8, minor: UInt8, patch: UInt8
    public init(_ major: UInt8, _ minor: UInt8, _ patch: UInt8) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }
    public var description: String { "\(major).\(minor).\(patch)" }
}

/// SET_CLOCK request: the hub's UTC time and the pod's UTC offset now.
public struct ClockSetting: Sendable, Hashable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var unixMillis: Int64
    /// Local time = UTC + this many minutes (−720…+840); the hub re-sends it at DST changes.
    public var utcOffsetMinutes: Int16
    public init(unixMillis: Int64, utcOffsetMinutes: Int16) {
        self.unixMillis = unixMillis
        self.utcOffsetMinutes = utcOffsetMinutes
    }
}

/// SET_CLOCK response body: the tick at which the clock was applied, so every sample can
/// be placed in time from its tick alone (time = unixMillis + (tick − appliedTick) × 2 ms).
public struct ClockAnchor: Sendable, Hashable {
    public var tick: UInt64
    public var unixMillis: Int64
    public var utcOffsetMinutes: Int16
    public init(tick: UInt64, unixMillis: Int64, utcOffsetMinutes: Int16) {
        self.tick = tick
        self.unixMillis = unixMillis
        self.utcOffsetMinutes = utcOffsetMinutes
    }

    /// Unix seconds of `tick` under this anchor.
    public func unixTime(ofTick t: UInt64, tickRate: Int = Wire.tickRate) -> Double {
        Double(unixMillis) / 1000 + (Double(t) - Double(tick)) / Double(tickRate)
    }
}

/// SET_POWER_SCHEDULE: on and off times for the weekdays in the mask; replaces the
/// side's entries for those days. Off earlier than on crosses midnight and is valid.
/// An empty mask clears the side's power schedule.
public struct PowerSchedule: Sendable, Hashable {
    public var side: BedSide
    public var days: WeekdayMask
    public var on: TimeOfDay
    public var off: TimeOfDay
    /// Power level 0–100 %.
    public var level: UInt8
    public init(side: BedSide, days: WeekdayMask, on: TimeOfDay, off: TimeOfDay, level: UInt8) {
        self.side = side
        self.days = days
        self.on = on
        self.off = off
        self.level = level
    }
    /// True when the power-off time falls on the next day.
    public var crossesMidnight: Bool { off <= on }
}

/// SET_ALARM: one alarm per side, replaced by each new one.
public struct AlarmSetting: Sendable, Hashable {
    public var side: BedSide
    public var days: WeekdayMask
    public var time: TimeOfDay
    /// Vibration intensity 0–100 %.
    public var intensity: UInt8
    public var pattern: AlarmPattern
    /// Seconds the alarm vibrates unless stopped or snoozed (1–3600).
    public var durationSeconds: UInt16
    public init(side: BedSide, days: WeekdayMask, time: TimeOfDay, intensity: UInt8,
                pattern: AlarmPattern, durationSeconds: UInt16) {
        self.side = side
        self.days = days
        self.time = time
        self.intensity = intensity
        self.pattern = pattern
        self.durationSeconds = durationSeconds
    }
}

/// TRIGGER_ALARM (v1.1): fire a side's alarm now, e.g. when the sleeper is in light sleep
/// inside a smart-wake window. The pod also disarms that side's alarm for the rest of the
/// local day, so an early wake is not followed by a second alarm at the armed time.
public struct AlarmTrigger: Sendable, Hashable {
    public var side: BedSide
    /// Vibration intensity 0–100 %.
    public var intensity: UInt8
    public var pattern: AlarmPattern
    /// Seconds it vibrates unless stopped or snoozed (1–3600).
    public var durationSeconds: UInt16
    public init(side: BedSide, intensity: UInt8, pattern: AlarmPattern, durationSeconds: UInt16) {
        self.side = side
        self.intensity = intensity
        self.pattern = pattern
        self.durationSeconds = durationSeconds
    }
}

/// SET_POWER: switch a side's power stage now (until the next scheduled change).
public struct PowerCommand: Sendable, Hashable {
    public var side: BedSide
    public var on: Bool
    public var level: UInt8
    public init(side: BedSide, on: Bool, level: UInt8) {
        self.side = side
        self.on = on
        self.level = level
    }
}

/// The one answer to a request.
public struct Response: Sendable, Hashable {
    /// The type of the request this answers.
    public var request: MessageType
    public var status: Status
    /// Present only when `status == .ok` and the request returns data.
    public var body: ResponseBody
    public init(request: MessageType, status: Status, body: ResponseBody = .none) {
        self.request = request
        self.status = status
        self.body = body
    }
}

public enum ResponseBody: Sendable, Hashable {
    case none
    case hello(PodInfo)
    case pong([UInt8])
    case status(PodStatus)
    case clock(ClockAnchor)
    case schedule(ScheduleReport)
}

/// GET_STATUS response body.
public struct PodStatus: Sendable, Hashable {
    public var tick: UInt64
    /// False after a reboot until the hub sets the clock: the pod's RTC has no battery.
    public var clockValid: Bool
    public var unixMillis: Int64
    public var utcOffsetMinutes: Int16
    public var uptimeSeconds: UInt32
    public var bootCount: UInt32
    public var streaming: StreamMask
    /// Bit n set: side n's power stage is on.
    public var powerMask: UInt8
    /// Bit n set: side n has an alarm set.
    public var alarmArmedMask: UInt8
    /// Bit n set: side n's alarm is vibrating now.
    public var alarmActiveMask: UInt8
    /// Frames the pod could not send (its transmit queue was full).
    public var framesDropped: UInt32
    public init(tick: UInt64, clockValid: Bool, unixMillis: Int64, utcOffsetMinutes: Int16,
                uptimeSeconds: UInt32, bootCount: UInt32, streaming: StreamMask, powerMask: UInt8,
                alarmArmedMask: UInt8, alarmActiveMask: UInt8, framesDropped: UInt32) {
        self.tick = tick
        self.clockValid = clockValid
        self.unixMillis = unixMillis
        self.utcOffsetMinutes = utcOffsetMinutes
        self.uptimeSeconds = uptimeSeconds
        self.bootCount = bootCount
        self.streaming = streaming
        self.powerMask = powerMask
        self.alarmArmedMask = alarmArmedMask
        self.alarmActiveMask = alarmActiveMask
        self.framesDropped = framesDropped
    }
}

/// GET_SCHEDULE response body: what the pod holds for one side (so the hub can verify).
public struct ScheduleReport: Sendable, Hashable {
    public var side: BedSide
    /// Weekdays with a power schedule; the single on/off/level pair is the most recent one set.
    public var power: PowerSchedule?
    public var alarm: AlarmSetting?
    public init(side: BedSide, power: PowerSchedule?, alarm: AlarmSetting?) {
        self.side = side
        self.power = power
        self.alarm = alarm
    }
}

/// PIEZO: a block of consecutive samples of one side, channels interleaved.
public struct PiezoBlock: Sendable, Hashable {
    public var side: BedSide
    public var channels: UInt8
    /// Gain setting of the front-end amplifier (1…1024, ×1 = unity).
    public var gain: UInt16
    /// Tick of the first sample; the next block of the side starts at firstTick + count.
    public var firstTick: UInt64
    /// `count × channels` samples: s0c0, s0c1, s1c0, s1c1, …
    public var samples: [Int32]
    public init(side: BedSide, channels: UInt8, gain: UInt16, firstTick: UInt64, samples: [Int32]) {
        self.side = side
        self.channels = channels
        self.gain = gain
        self.firstTick = firstTick
        self.samples = samples
    }
    /// Samples per channel.
    public var count: Int { channels == 0 ? 0 : samples.count / Int(channels) }
}

/// CAPACITANCE: the side's presence electrodes (3 on v1 pods), raw counts.
public struct CapacitanceReading: Sendable, Hashable {
    public var side: BedSide
    public var tick: UInt64
    public var values: [Int32]
    public init(side: BedSide, tick: UInt64, values: [Int32]) {
        self.side = side
        self.tick = tick
        self.values = values
    }
}

/// ENVIRONMENT: temperatures in centi-degrees Celsius, humidity in centi-percent.
/// `nil` travels as the reserved value 0x7FFF (temperatures) / 0xFFFF (humidity).
public struct EnvironmentReading: Sendable, Hashable {
    public var tick: UInt64
    public var bedCentiCelsius: [Int16?]
    public var ambientCentiCelsius: Int16?
    public var humidityCentiPercent: UInt16?
    public init(tick: UInt64, bedLeft: Int16?, bedRight: Int16?, ambient: Int16?, humidity: UInt16?) {
        self.tick = tick
        self.bedCentiCelsius = [bedLeft, bedRight]
        self.ambientCentiCelsius = ambient
        self.humidityCentiPercent = humidity
    }
}

/// EVENT: something happened on the pod.
public struct PodEvent: Sendable, Hashable {
    public var tick: UInt64
    public var kind: Kind
    /// nil for events that concern the whole pod (boot).
    public var side: BedSide?
    /// Meaning depends on the kind (see `Kind`).
    public var argument: UInt16

    public init(tick: UInt64, kind: Kind, side: BedSide?, argument: UInt16 = 0) {
        self.tick = tick
        self.kind = kind
        self.side = side
        self.argument = argument
    }

    public enum Kind: Sendable, Hashable {
        /// Argument: the alarm's intensity.
        case alarmStarted
        /// Argument: 0 duration elapsed, 1 button, 2 cleared by the hub.
        case alarmStopped
        /// Argument: snooze seconds.
        case alarmSnoozed
        /// Argument: 1 motor fault, 2 clock not set.
        case alarmFailed
        /// Argument: 1 single press, 2 double, 3 long.
        case button
        /// Argument: a `ResetReason`. Always the first frame after a restart (sequence 0).
        case boot
        case powerOn
        case powerOff
        /// A kind this implementation does not know: counted, passed on, not acted on.
        case other(UInt8)

        public init(code: UInt8) {
            switch code {
            case 1: self = .alarmStarted
            case 2: self = .alarmStopped
            case 3: self = .alarmSnoozed
            case 4: self = .alarmFailed
            case 5: self = .button
            case 6: self = .boot
            case 7: self = .powerOn
            case 8: self = .powerOff
            default: self = .other(code)
            }
        }

        public var code: UInt8 {
            switch self {
            case .alarmStarted: 1
            case .alarmStopped: 2
            case .alarmSnoozed: 3
            case .alarmFailed: 4
            case .button: 5
            case .boot: 6
            case .powerOn: 7
            case .powerOff: 8
            case .other(let c): c
            }
        }
    }
}

/// LOG: a line of firmware log text (UTF-8, invalid bytes replaced).
public struct LogLine: Sendable, Hashable {
    public var tick: UInt64
    /// 0 debug, 1 info, 2 warning, 3 error.
    public var level: UInt8
    public var text: String
    public init(tick: UInt64, level: UInt8, text: String) {
        self.tick = tick
        self.level = level
        self.text = text
    }
}

extension Message {
    /// Whether a streamed message stays inside what HELLO announced (§6, v1.1): a side
    /// beyond `sides`, or a piezo block with more channels than `channelsPerSide`, does not;
    /// the hub drops such a frame and counts it as malformed instead of guessing.
    public func fits(sides: UInt8, channelsPerSide: UInt8) -> Bool {
        switch self {
        case .piezo(let p): UInt8(p.side.index) < sides && p.channels <= channelsPerSide
        case .capacitance(let c): UInt8(c.side.index) < sides
        case .event(let e): e.side.map { UInt8($0.index) < sides } ?? true
        default: true
        }
    }
}
