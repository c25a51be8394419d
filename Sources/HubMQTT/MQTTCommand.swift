import Foundation

/// A command received over MQTT, validated before anything is sent to a pod.
///
/// Parsing is total: every topic and payload either becomes a `MQTTCommand` or an
/// `MQTTCommandError` saying what was wrong (meant for `<base>/error`), so a bad
/// command never reaches a pod. Pure: no I/O.
package struct MQTTCommand: Sendable, Hashable {
    /// The pod's serial as it appears in the topic (see `MQTTTopics.topicLevel`).
    package var serialLevel: String
    package var side: CommandSide
    package var action: Action

    package enum CommandSide: String, Sendable, Hashable, CaseIterable {
        case left, right
    }

    package enum Action: Sendable, Hashable {
        /// Power the side now; `level` 1–100 (percent), nil keeps the pod's default (100).
        case power(on: Bool, level: Int?)
        /// Snooze the ringing alarm; nil seconds = the pod's default (540 s); else 1–3600.
        case snooze(seconds: Int?)
        /// Stop the ringing alarm.
        case stopAlarm
        /// Set the manual bedtime (`HH:mm`, pod local time); the wake time stays.
        case bedtime(String)
        /// Set the manual wake time (`HH:mm`); the bedtime stays.
        case wake(String)
        /// Set the manual weekend bedtime (nights whose wake day is a weekend day); the
        /// weekday times and the weekend wake stay.
        case weekendBedtime(String)
        /// Set the manual weekend wake time; the weekday times and the weekend bedtime stay.
        case weekendWake(String)
        /// Forget the manual schedule: inference (or the default) takes over again.
        case clearSchedule
        /// Switch the side's alarm on (the schedule's alarm is sent) or off (cleared on the pod).
        case alarm(on: Bool)
        /// The smart-wake window before the alarm, 0 (a fixed alarm) to 120 minutes.
        case wakeWindow(minutes: Int)
        /// One setting of presence-driven power: a switch (1 on, 0 off) or a whole number of
        /// minutes or nights, whose range the hub checks (docs/schedule.md §5).
        case presencePower(PresencePowerField, Int)
    }

    /// The presence-driven power settings a command can change (`presence_power/<field>/set`).
    package enum PresencePowerField: String, Sendable, Hashable, CaseIterable {
        case enabled
        case keepOnWhileOccupied = "keep_on_while_occupied"
        case keepOnAfterLeavingMinutes = "keep_on_after_leaving_minutes"
        case offWhenLeft = "off_when_left"
        case offWhenLeftMinutes = "off_when_left_minutes"
        case awayAfterNights = "away_after_nights"
        case away

        /// ON/OFF rather than a number.
        package var isSwitch: Bool {
            switch self {
            case .enabled, .keepOnWhileOccupied, .offWhenLeft, .away: true
            case .keepOnAfterLeavingMinutes, .offWhenLeftMinutes, .awayAfterNights: false
            }
        }
    }

    /// Short name for results and logs: `power`, `snooze`, `stop`, `bedtime`, `wake`,
    /// `weekend_bedtime`, `weekend_wake`, `clear`, `alarm`, `wake_window`, `presence_power_<field>`.
    package var name: String {
        switch action {
        case .power: "power"
        case .snooze: "snooze"
        case .stopAlarm: "stop"
        case .bedtime: "bedtime"
        case .wake: "wake"
        case .weekendBedtime: "weekend_bedtime"
        case .weekendWake: "weekend_wake"
        case .clearSchedule: "clear"
        case .alarm: "alarm"
        case .wakeWindow: "wake_window"
        case .presencePower(let field, _): "presence_power_\(field.rawValue)"
        }
    }

    /// Reads a message on one of `topics.commandFilters`.
    package static func parse(topic: String, payload: [UInt8], topics: MQTTTopics) -> Result<MQTTCommand, MQTTCommandError> {
        func fail(_ reason: String) -> Result<MQTTCommand, MQTTCommandError> {
            .failure(MQTTCommandError(topic: topic, payload: String(decoding: payload.prefix(200), as: UTF8.self), reason: reason))
        }
        guard topic.hasPrefix(topics.base + "/") else { return fail("not a podbridge command topic") }
        let levels = topic.dropFirst(topics.base.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.count >= 3, !levels[0].isEmpty else { return fail("expected \(topics.base)/<serial>/<side>/<command>") }
        guard let side = CommandSide(rawValue: levels[1]) else {
            return fail("unknown side \(quoted(levels[1])): expected left or right")
        }
        guard let text = String(validating: payload, as: UTF8.self) else { return fail("payload is not UTF-8") }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let path = levels.dropFirst(2).joined(separator: "/")
        // Zero bytes are how MQTT clears a retained message (the docs tell users to clear a
        // command retained by mistake that way), so they are never a press: a clear must not
        // stop today's alarm or wipe the schedule.
        guard !payload.isEmpty else { return fail("an empty message clears a retained command and is not one") }
        let action: Action
        switch path {
        case "power/set":
            switch parsePower(value) {
            case .success(let a): action = a
            case .failure(let error): return fail(error.reason)
            }
        case "alarm/snooze":
            if value.uppercased() == "PRESS" {
                action = .snooze(seconds: nil)
            } else if let s = Int(value), (1...3600).contains(s) {
                action = .snooze(seconds: s)
            } else {
                return fail("expected PRESS or snooze seconds 1–3600, got \(quoted(value))")
            }
        case "alarm/stop":
            guard value.uppercased() == "PRESS" else { return fail("expected PRESS, got \(quoted(value))") }
            action = .stopAlarm
        case "schedule/bedtime/set", "schedule/wake/set", "schedule/weekend_bedtime/set", "schedule/weekend_wake/set":
            guard let hhmm = validTimeOfDay(value) else { return fail("expected a time HH:mm (00:00–23:59), got \(quoted(value))") }
            switch path {
            case "schedule/bedtime/set": action = .bedtime(hhmm)
            case "schedule/wake/set": action = .wake(hhmm)
            case "schedule/weekend_bedtime/set": action = .weekendBedtime(hhmm)
            default: action = .weekendWake(hhmm)
            }
        case "alarm/set":
            guard let on = onOff(value) else { return fail("expected ON or OFF, got \(quoted(value))") }
            action = .alarm(on: on)
        case "wake_window/set":
            // Home Assistant's number entity sends "30" or "30.0".
            guard let number = Double(value), let minutes = Int(exactly: number), (0...120).contains(minutes) else {
                return fail("expected whole minutes 0–120 (0: a fixed alarm), got \(quoted(value))")
            }
            action = .wakeWindow(minutes: minutes)
        case "schedule/clear":
            guard value.uppercased() == "PRESS" else { return fail("expected PRESS, got \(quoted(value))") }
            action = .clearSchedule
        case _ where levels.count == 5 && levels[2] == "presence_power" && levels[4] == "set":
            guard let field = PresencePowerField(rawValue: levels[3]) else {
                return fail("unknown presence power setting \(quoted(levels[3])): expected "
                            + PresencePowerField.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if field.isSwitch {
                guard let on = onOff(value) else { return fail("expected ON or OFF, got \(quoted(value))") }
                action = .presencePower(field, on ? 1 : 0)
            } else {
                // Home Assistant's number entity sends "10" or "10.0"; the hub checks the range.
                guard let number = Double(value), let whole = Int(exactly: number), whole >= 0 else {
                    return fail("expected a whole number, got \(quoted(value))")
                }
                action = .presencePower(field, whole)
            }
        default:
            return fail("unknown command \(quoted(path))")
        }
        return .success(MQTTCommand(serialLevel: levels[0], side: side, action: action))
    }

    /// A value as a refusal quotes it: in full up to `quoteLimit` characters, else its start,
    /// an ellipsis and its length. A payload can be megabytes, and the reason goes to
    /// `<base>/error` and the log: quoted whole, a 2 MB bedtime made a 2 MB message and log line.
    package static func quoted(_ value: some StringProtocol) -> String {
        guard value.count > quoteLimit else { return "'\(value)'" }
        return "'\(value.prefix(quoteLimit))…' (\(value.count) characters)"
    }

    /// How many characters of a refused value `quoted` shows.
    package static let quoteLimit = 64

    /// `ON`, `OFF`, or JSON `{"state": "ON", "level": 40}` (level 1–100).
    static func parsePower(_ value: String) -> Result<Action, PowerPayloadError> {
        if let on = onOff(value) { return .success(.power(on: on, level: nil)) }
        guard value.hasPrefix("{"),
              let object = try? JSONSerialization.jsonObject(with: Data(value.utf8)) as? [String: Any] else {
            return .failure(PowerPayloadError("expected ON, OFF or {\"state\": \"ON\", \"level\": 1–100}, got \(quoted(value))"))
        }
        let unknown = Set(object.keys).subtracting(["state", "level"])
        guard unknown.isEmpty else { return .failure(PowerPayloadError("unknown keys \(quoted(unknown.sorted().joined(separator: ", "))) in power command")) }
        guard let state = object["state"] as? String, let on = onOff(state) else {
            return .failure(PowerPayloadError("power command needs \"state\": \"ON\" or \"OFF\""))
        }
        guard object["level"] != nil else { return .success(.power(on: on, level: nil)) }
        struct Levelled: Decodable { var level: Double }
        guard let level = (try? JSONDecoder().decode(Levelled.self, from: Data(value.utf8))).flatMap({ Int(exactly: $0.level) }),
              (1...100).contains(level) else {
            return .failure(PowerPayloadError("power level must be a whole number 1–100"))
        }
        return .success(.power(on: on, level: level))
    }

    struct PowerPayloadError: Error { let reason: String; init(_ r: String) { reason = r } }

    static func onOff(_ value: String) -> Bool? {
        switch value.uppercased() {
        case "ON": true
        case "OFF": false
        default: nil
        }
    }

    /// `H:mm` or `HH:mm` within a day, returned as `HH:mm`.
    static func validTimeOfDay(_ value: String) -> String? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let h = Int(parts[0]), let m = Int(parts[1]), (0..<24).contains(h), (0..<60).contains(m) else { return nil }
        return String(format: "%02d:%02d", h, m)
    }
}

/// Why a command was refused before reaching the pod (for `<base>/error`).
package struct MQTTCommandError: Error, Sendable, Hashable, CustomStringConvertible {
    package var topic: String
    package var payload: String
    package var reason: String

    package var description: String { "MQTT command on \(topic) refused: \(reason)" }
}
