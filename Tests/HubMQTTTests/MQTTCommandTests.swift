import HubMQTT
import Testing

/// Command topics and payloads: every valid form, and every bad one refused with a reason.
@Suite struct MQTTCommandTests {
    let topics = MQTTTopics()

    func parse(_ topic: String, _ payload: String) -> Result<MQTTCommand, MQTTCommandError> {
        MQTTCommand.parse(topic: topic, payload: Array(payload.utf8), topics: topics)
    }

    func action(_ topic: String, _ payload: String) -> MQTTCommand.Action? {
        if case .success(let c) = parse(topic, payload) { c.action } else { nil }
    }

    func reason(_ topic: String, _ payload: String) -> String? {
        if case .failure(let e) = parse(topic, payload) { e.reason } else { nil }
    }

    @Test func validCommandsParse() throws {
        let result = parse("podbridge/POD1/left/power/set", "ON")
        let command = try result.get()
        #expect(command.serialLevel == "POD1")
        #expect(command.side == .left)
        #expect(command.action == .power(on: true, level: nil))
        #expect(action("podbridge/POD1/right/power/set", "off") == .power(on: false, level: nil))
        #expect(action("podbridge/POD1/right/power/set", #"{"state": "ON", "level": 40}"#) == .power(on: true, level: 40))
        #expect(action("podbridge/POD1/left/alarm/snooze", "PRESS") == .snooze(seconds: nil))
        #expect(action("podbridge/POD1/left/alarm/snooze", "300") == .snooze(seconds: 300))
        #expect(action("podbridge/POD1/left/alarm/stop", "PRESS") == .stopAlarm)
        #expect(action("podbridge/POD1/left/schedule/bedtime/set", "22:30") == .bedtime("22:30"))
        #expect(action("podbridge/POD1/left/schedule/wake/set", "7:05") == .wake("07:05"))
        #expect(action("podbridge/POD1/left/schedule/weekend_bedtime/set", "23:15") == .weekendBedtime("23:15"))
        #expect(action("podbridge/POD1/right/schedule/weekend_wake/set", "9:00") == .weekendWake("09:00"))
        #expect(action("podbridge/POD1/left/schedule/clear", "PRESS") == .clearSchedule)
        #expect(action("podbridge/POD1/left/alarm/set", "OFF") == .alarm(on: false))
        #expect(action("podbridge/POD1/right/alarm/set", "on") == .alarm(on: true))
        #expect(action("podbridge/POD1/left/wake_window/set", "30") == .wakeWindow(minutes: 30))
        #expect(action("podbridge/POD1/left/wake_window/set", "45.0") == .wakeWindow(minutes: 45))
        #expect(action("podbridge/POD1/left/wake_window/set", "0") == .wakeWindow(minutes: 0))
        #expect(action("podbridge/POD1/left/presence_power/enabled/set", "ON") == .presencePower(.enabled, 1))
        #expect(action("podbridge/POD1/right/presence_power/away/set", "off") == .presencePower(.away, 0))
        #expect(action("podbridge/POD1/left/presence_power/off_when_left_minutes/set", "15.0") == .presencePower(.offWhenLeftMinutes, 15))
        #expect(action("podbridge/POD1/left/presence_power/away_after_nights/set", "0") == .presencePower(.awayAfterNights, 0))
    }

    @Test func malformedCommandsAreRefusedWithAReason() {
        #expect(reason("podbridge/POD1/middle/power/set", "ON")?.contains("unknown side") == true)
        #expect(reason("podbridge/POD1/left/alarm/set", "PRESS")?.contains("expected ON or OFF") == true)
        #expect(reason("podbridge/POD1/left/wake_window/set", "121")?.contains("0–120") == true)
        #expect(reason("podbridge/POD1/left/wake_window/set", "12.5")?.contains("0–120") == true)
        #expect(reason("podbridge/POD1/left/presence_power/heat/set", "ON")?.contains("unknown presence power setting 'heat'") == true)
        #expect(reason("podbridge/POD1/left/presence_power/away/set", "7")?.contains("expected ON or OFF") == true)
        #expect(reason("podbridge/POD1/left/presence_power/off_when_left_minutes/set", "-5")?.contains("whole number") == true)
        #expect(reason("podbridge/POD1/left/presence_power/off_when_left_minutes/set", "ON")?.contains("whole number") == true)
        #expect(reason("podbridge/POD1/left/power/set", "MAYBE")?.contains("expected ON, OFF") == true)
        #expect(reason("podbridge/POD1/left/power/set", #"{"state": "ON", "level": 140}"#)?.contains("1–100") == true)
        #expect(reason("podbridge/POD1/left/power/set", #"{"state": "ON", "level": 12.5}"#)?.contains("1–100") == true)
        #expect(reason("podbridge/POD1/left/power/set", #"{"state": "ON", "level": true}"#)?.contains("1–100") == true)
        #expect(reason("podbridge/POD1/left/power/set", #"{"state": "ON", "colour": 1}"#)?.contains("unknown keys") == true)
        #expect(reason("podbridge/POD1/left/power/set", #"{"level": 10}"#)?.contains("state") == true)
        #expect(reason("podbridge/POD1/left/alarm/snooze", "0")?.contains("1–3600") == true)
        #expect(reason("podbridge/POD1/left/alarm/snooze", "4000")?.contains("1–3600") == true)
        #expect(reason("podbridge/POD1/left/alarm/stop", "now")?.contains("PRESS") == true)
        // Zero bytes clear a retained command (docs/mqtt.md): never a press of any button.
        for topic in ["alarm/snooze", "alarm/stop", "schedule/clear", "power/set"] {
            #expect(reason("podbridge/POD1/left/\(topic)", "")?.contains("clears a retained command") == true, "\(topic)")
        }
        for bad in ["24:00", "7:5", "07:60", "0730", "ab:cd", " ", "07:30:00", "-1:30", "٠٧:٣٠"] {
            #expect(reason("podbridge/POD1/left/schedule/bedtime/set", bad)?.contains("HH:mm") == true, "accepted '\(bad)'")
        }
        #expect(reason("podbridge/POD1/left/kettle/set", "ON")?.contains("unknown command") == true)
        #expect(MQTTCommand.parse(topic: "podbridge/POD1/left/power/set", payload: [0xC3, 0x28], topics: topics)
            .isFailure(containing: "UTF-8"))
        #expect(reason("other/POD1/left/power/set", "ON") != nil)
    }

    /// A refusal quotes a bounded start of the value (the reason goes to `<base>/error` and the
    /// log): a 2 MB bedtime gave a 2 MB error message and log line.
    @Test func aHugeValueIsQuotedByItsStartAndItsLength() throws {
        let huge = String(repeating: "9", count: 2_000_000)
        let topics = ["schedule/bedtime/set", "schedule/wake/set", "alarm/snooze", "alarm/stop", "alarm/set",
                      "wake_window/set", "schedule/clear", "power/set"]
        for topic in topics {
            let why = try #require(reason("podbridge/POD1/left/\(topic)", huge), "\(topic) accepted")
            #expect(why.count < 300, "\(topic): \(why.count) characters")
            #expect(why.contains("'\(String(repeating: "9", count: 64))…' (2000000 characters)"), "\(topic): \(why)")
        }
        let keys = try #require(reason("podbridge/POD1/left/power/set", #"{"state": "ON", "\#(huge)": 1}"#))
        #expect(keys.contains("unknown keys") && keys.contains("(2000000 characters)") && keys.count < 300, "\(keys.prefix(300))")
        let side = try #require(reason("podbridge/POD1/\(huge)/power/set", "ON"))
        #expect(side.contains("unknown side") && side.count < 300)
        let command = try #require(reason("podbridge/POD1/left/\(huge)", "ON"))
        #expect(command.contains("unknown command") && command.count < 300)
        // Short values are quoted whole, as before.
        #expect(reason("podbridge/POD1/left/alarm/stop", "now") == "expected PRESS, got 'now'")
        let sixtyFour = String(repeating: "x", count: 64)
        #expect(reason("podbridge/POD1/left/alarm/stop", sixtyFour) == "expected PRESS, got '\(sixtyFour)'")
    }

    @Test func serialsBecomeSafeTopicLevels() {
        #expect(MQTTTopics.topicLevel("VPOD-0001_a") == "VPOD-0001_a")
        #expect(MQTTTopics.topicLevel("a/b+c#d e") == "a_b_c_d_e")
        let t = MQTTTopics(base: "home/pods", discoveryPrefix: "ha")
        #expect(t.sideState("X/1", "left") == "home/pods/X_1/left/state")
        #expect(t.serialInDiscoveryTopic("ha/sensor/podbridge_X_1/left_heart_rate/config") == "X_1")
        #expect(t.serialInDiscoveryTopic("ha/sensor/zigbee_lamp/power/config") == nil)
        #expect(t.serialInDiscoveryTopic("homeassistant/sensor/podbridge_X/a/config") == nil)
    }
}

extension Result where Failure == MQTTCommandError {
    func isFailure(containing text: String) -> Bool {
        if case .failure(let e) = self { e.reason.contains(text) } else { false }
    }
}
