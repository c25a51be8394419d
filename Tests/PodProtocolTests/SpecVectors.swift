import Foundation
import PodProtocol
import SleepDomain

/// The messages behind the test vectors of firmware-protocol.md §10, by vector name.
/// The document's hex is the contract; `SpecVectorTests` decodes it and re-encodes these.
enum SpecVectors {
    struct Vector {
        var name: String
        var sequence: UInt16
        var requestID: UInt16
        var flags: FrameFlags = []
        var message: Message
    }

    static let schedule = PowerSchedule(side: .left, days: .everyDay, on: TimeOfDay("22:30")!,
                                        off: TimeOfDay("07:15")!, level: 80)
    static let alarm = AlarmSetting(side: .right, days: .mondayToFriday, time: TimeOfDay("06:45")!, intensity: 70,
                                    pattern: .rise, durationSeconds: 600)
    static let info = PodInfo(firmware: FirmwareVersion(1, 4, 2), sides: 2, piezoChannelsPerSide: 2, sampleRate: 500,
                              capacitanceRateMilliHz: 2000, features: .v1, bootCount: 7, tick: 1_000, serial: "PB0001")
    /// The same pod speaking v1.1: the alarm-trigger bit and the appended minor.
    static let infoV11 = PodInfo(firmware: FirmwareVersion(1, 4, 2), sides: 2, piezoChannelsPerSide: 2, sampleRate: 500,
                                 capacitanceRateMilliHz: 2000, features: .all, bootCount: 7, tick: 1_000, serial: "PB0001",
                                 protocolMinor: 1)

    static let all: [Vector] = [
        Vector(name: "hello", sequence: 0, requestID: 1, message: .hello(HelloRequest())),
        Vector(name: "hello-reply", sequence: 0, requestID: 1,
               message: .response(Response(request: .hello, status: .ok, body: .hello(info)))),
        Vector(name: "hello-nack-version", sequence: 0, requestID: 1,
               message: .response(Response(request: .hello, status: .unsupportedVersion))),
        Vector(name: "ping", sequence: 1, requestID: 2, message: .ping(nonce: [0xDE, 0xAD, 0x00, 0x01])),
        Vector(name: "pong", sequence: 1, requestID: 2,
               message: .response(Response(request: .ping, status: .ok, body: .pong([0xDE, 0xAD, 0x00, 0x01])))),
        Vector(name: "get-status", sequence: 2, requestID: 3, message: .getStatus),
        Vector(name: "status-reply", sequence: 2, requestID: 3, message: .response(Response(
            request: .getStatus, status: .ok, body: .status(PodStatus(
                tick: 90_000, clockValid: true, unixMillis: 1_767_225_600_000, utcOffsetMinutes: 60,
                uptimeSeconds: 180, bootCount: 7, streaming: .all, powerMask: 0b01, alarmArmedMask: 0b10,
                alarmActiveMask: 0, framesDropped: 0))))),
        Vector(name: "set-clock", sequence: 3, requestID: 4,
               message: .setClock(ClockSetting(unixMillis: 1_767_225_600_000, utcOffsetMinutes: 60))),
        Vector(name: "clock-reply", sequence: 3, requestID: 4, message: .response(Response(
            request: .setClock, status: .ok,
            body: .clock(ClockAnchor(tick: 90_500, unixMillis: 1_767_225_600_000, utcOffsetMinutes: 60))))),
        Vector(name: "set-power-schedule", sequence: 4, requestID: 5, message: .setPowerSchedule(schedule)),
        Vector(name: "ack", sequence: 4, requestID: 5,
               message: .response(Response(request: .setPowerSchedule, status: .ok))),
        Vector(name: "set-alarm", sequence: 5, requestID: 6, message: .setAlarm(alarm)),
        Vector(name: "nack-not-ready", sequence: 5, requestID: 6,
               message: .response(Response(request: .setAlarm, status: .notReady))),
        Vector(name: "set-alarm-retry", sequence: 6, requestID: 6, flags: .retransmit, message: .setAlarm(alarm)),
        Vector(name: "clear-alarm", sequence: 7, requestID: 7, message: .clearAlarm(side: .right)),
        Vector(name: "clear-alarm-ack", sequence: 7, requestID: 7,
               message: .response(Response(request: .clearAlarm, status: .ok))),
        Vector(name: "snooze", sequence: 8, requestID: 8, message: .snooze(side: .right, seconds: 540)),
        Vector(name: "snooze-nack", sequence: 8, requestID: 8,
               message: .response(Response(request: .snooze, status: .notReady))),
        Vector(name: "start-stream", sequence: 9, requestID: 9, message: .startStream(.all)),
        Vector(name: "start-stream-ack", sequence: 9, requestID: 9,
               message: .response(Response(request: .startStream, status: .ok))),
        Vector(name: "stop-stream", sequence: 10, requestID: 10, message: .stopStream),
        Vector(name: "stop-stream-ack", sequence: 10, requestID: 10,
               message: .response(Response(request: .stopStream, status: .ok))),
        Vector(name: "set-power", sequence: 11, requestID: 11,
               message: .setPower(PowerCommand(side: .left, on: true, level: 50))),
        Vector(name: "set-power-nack", sequence: 11, requestID: 11,
               message: .response(Response(request: .setPower, status: .unsupportedFeature))),
        Vector(name: "get-schedule", sequence: 12, requestID: 12, message: .getSchedule(side: .left)),
        Vector(name: "schedule-reply", sequence: 12, requestID: 12, message: .response(Response(
            request: .getSchedule, status: .ok,
            body: .schedule(ScheduleReport(side: .left, power: schedule, alarm: nil))))),
        Vector(name: "piezo", sequence: 100, requestID: 0, message: .piezo(PiezoBlock(
            side: .left, channels: 2, gain: 16, firstTick: 123_456,
            samples: [150_000, -150_000, 0, 1, -1, 2_147_483_647, -2_147_483_648, 256]))),
        Vector(name: "capacitance", sequence: 101, requestID: 0, message: .capacitance(CapacitanceReading(
            side: .right, tick: 123_500, values: [1_200, 1_180, 1_215]))),
        Vector(name: "environment", sequence: 102, requestID: 0, message: .environment(EnvironmentReading(
            tick: 124_000, bedLeft: 3_150, bedRight: nil, ambient: 2_125, humidity: 4_550))),
        Vector(name: "event-alarm-started", sequence: 103, requestID: 0, message: .event(PodEvent(
            tick: 125_000, kind: .alarmStarted, side: .right, argument: 70))),
        Vector(name: "event-boot", sequence: 0, requestID: 0, message: .event(PodEvent(
            tick: 0, kind: .boot, side: nil, argument: ResetReason.watchdog.rawValue))),
        Vector(name: "log", sequence: 104, requestID: 0, message: .log(LogLine(tick: 125_500, level: 1, text: "pump on"))),
        // v1.1
        Vector(name: "hello-v11", sequence: 0, requestID: 1, message: .hello(HelloRequest(maxMinor: 1))),
        Vector(name: "hello-reply-v11", sequence: 0, requestID: 1,
               message: .response(Response(request: .hello, status: .ok, body: .hello(infoV11)))),
        Vector(name: "trigger-alarm", sequence: 13, requestID: 13,
               message: .triggerAlarm(AlarmTrigger(side: .right, intensity: 70, pattern: .rise, durationSeconds: 600))),
        Vector(name: "trigger-alarm-ack", sequence: 13, requestID: 13,
               message: .response(Response(request: .triggerAlarm, status: .ok))),
        Vector(name: "nack-no-session", sequence: 14, requestID: 14,
               message: .response(Response(request: .getStatus, status: .noSession))),
        Vector(name: "nack-clock-not-set", sequence: 15, requestID: 15,
               message: .response(Response(request: .setAlarm, status: .clockNotSet))),
        Vector(name: "snooze-nack-nothing", sequence: 16, requestID: 16,
               message: .response(Response(request: .snooze, status: .nothingToSnooze))),
    ]

    /// Parses the ```vectors block of firmware-protocol.md: `name: hex bytes` per line.
    static func fromSpec() throws -> [String: [UInt8]] {
        let root = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("firmware-protocol.md"), encoding: .utf8)
        var result: [String: [UInt8]] = [:]
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```vectors") { inBlock = true; continue }
            if inBlock && line.hasPrefix("```") { inBlock = false; continue }
            guard inBlock, let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let hex = line[line.index(after: colon)...].split(separator: " ")
            result[name] = hex.compactMap { UInt8($0, radix: 16) }
        }
        return result
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: " ")
    }
}
