import PodProtocol
import SleepDomain

/// Random valid messages of every type, within each field's range.
enum RandomMessages {
    static func side(_ r: inout SplitMix64) -> BedSide { Bool.random(using: &r) ? .left : .right }
    static func time(_ r: inout SplitMix64) -> TimeOfDay {
        TimeOfDay(hour: Int.random(in: 0...23, using: &r), minute: Int.random(in: 0...59, using: &r))!
    }
    static func days(_ r: inout SplitMix64) -> WeekdayMask { WeekdayMask(rawValue: UInt8.random(in: 0...0x7F, using: &r)) }
    static func bytes(_ r: inout SplitMix64, max: Int) -> [UInt8] {
        (0..<Int.random(in: 0...max, using: &r)).map { _ in UInt8.random(in: 0...255, using: &r) }
    }
    static func u8(_ r: inout SplitMix64, _ range: ClosedRange<UInt8>) -> UInt8 { UInt8.random(in: range, using: &r) }

    static func streamed(_ r: inout SplitMix64) -> Message {
        switch Int.random(in: 0..<10, using: &r) {
        case 0..<6:
            let channels = u8(&r, 1...2)
            let count = Int.random(in: 1...50, using: &r)
            return .piezo(PiezoBlock(side: side(&r), channels: channels, gain: UInt16.random(in: 1...1024, using: &r),
                                     firstTick: UInt64.random(in: 0...UInt64(UInt32.max), using: &r),
                                     samples: (0..<(count * Int(channels))).map { _ in Int32.random(in: -400_000...400_000, using: &r) }))
        case 6, 7:
            return .capacitance(CapacitanceReading(side: side(&r), tick: UInt64.random(in: 0...1 << 40, using: &r),
                                                   values: (0..<3).map { _ in Int32.random(in: 0...5_000, using: &r) }))
        case 8:
            return .environment(EnvironmentReading(tick: UInt64.random(in: 0...1 << 40, using: &r),
                                                   bedLeft: Int16.random(in: 1_000...4_000, using: &r), bedRight: nil,
                                                   ambient: Int16.random(in: -500...4_000, using: &r), humidity: 4_000))
        default:
            return .event(PodEvent(tick: UInt64.random(in: 0...1 << 40, using: &r), kind: .button, side: side(&r),
                                   argument: UInt16.random(in: 1...3, using: &r)))
        }
    }

    static func any(_ r: inout SplitMix64) -> Message {
        switch Int.random(in: 0..<20, using: &r) {
        case 0: return .hello(HelloRequest(minVersion: u8(&r, 0...255), maxVersion: u8(&r, 0...255)))
        case 1: return .ping(nonce: bytes(&r, max: 32))
        case 2: return .getStatus
        case 3: return .setClock(ClockSetting(unixMillis: Int64.random(in: 0...4_000_000_000_000, using: &r),
                                              utcOffsetMinutes: Int16.random(in: -720...840, using: &r)))
        case 4: return .setPowerSchedule(PowerSchedule(side: side(&r), days: days(&r), on: time(&r), off: time(&r),
                                                       level: u8(&r, 0...100)))
        case 5: return .setAlarm(AlarmSetting(side: side(&r), days: days(&r), time: time(&r), intensity: u8(&r, 0...100),
                                              pattern: AlarmPattern.allCases.randomElement(using: &r)!,
                                              durationSeconds: UInt16.random(in: 1...3600, using: &r)))
        case 6: return .clearAlarm(side: side(&r))
        case 7: return .snooze(side: side(&r), seconds: UInt16.random(in: 0...UInt16.max, using: &r))
        case 8: return .startStream(StreamMask(rawValue: u8(&r, 0...15)))
        case 9: return .stopStream
        case 10: return .setPower(PowerCommand(side: side(&r), on: Bool.random(using: &r), level: u8(&r, 0...100)))
        case 11: return .getSchedule(side: side(&r))
        case 12:
            let request = MessageType.allCases.filter(\.isRequest).randomElement(using: &r)!
            let status = [Status.busy, .badValue, .notReady, .internalError].randomElement(using: &r)!
            return .response(Response(request: request, status: status))
        case 13:
            let s = side(&r)
            let power = PowerSchedule(side: s, days: WeekdayMask(rawValue: u8(&r, 1...0x7F)), on: time(&r), off: time(&r),
                                      level: u8(&r, 0...100))
            return .response(Response(request: .getSchedule, status: .ok, body: .schedule(ScheduleReport(
                side: s, power: power, alarm: AlarmSetting(side: s, days: .saturdayAndSunday, time: time(&r), intensity: 10,
                                                           pattern: .double, durationSeconds: 30)))))
        case 14:
            return .response(Response(request: .setClock, status: .ok, body: .clock(ClockAnchor(
                tick: UInt64.random(in: 0...1 << 50, using: &r), unixMillis: Int64.random(in: 0...1 << 42, using: &r),
                utcOffsetMinutes: Int16.random(in: -720...840, using: &r)))))
        case 15:
            return .log(LogLine(tick: 1, level: u8(&r, 0...3), text: String(repeating: "é", count: Int.random(in: 0...40, using: &r))))
        case 16:
            return .response(Response(request: .hello, status: .ok, body: .hello(PodInfo(
                firmware: FirmwareVersion(1, 2, 3), sides: 2, piezoChannelsPerSide: u8(&r, 1...2), sampleRate: 500,
                capacitanceRateMilliHz: 2000, features: .all, bootCount: UInt32.random(in: 0...100, using: &r),
                tick: UInt64.random(in: 0...1 << 40, using: &r), serial: "SN\(Int.random(in: 0...99999, using: &r))"))))
        default:
            return streamed(&r)
        }
    }
}
