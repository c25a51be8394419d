import Foundation
import HubMQTT
import Testing

/// The discovery configs as Home Assistant reads them: required keys per component, unique
/// ids, one device block per pod, availability tied to the hub's last will.
@Suite struct HomeAssistantDiscoveryTests {
    static let topics = MQTTTopics()
    static let discovery = HomeAssistantDiscovery(topics: topics, configurationURL: "http://hub.local:8380/",
                                                  softwareVersion: "podbridge")
    static let pod = HomeAssistantDiscovery.Pod(serial: "VPOD0001", firmware: "1.0.0", sides: 2)

    /// Keys Home Assistant's MQTT platforms require (command-only entities have no state topic).
    static let required: [String: [String]] = [
        "binary_sensor": ["state_topic"], "sensor": ["state_topic"],
        "switch": ["command_topic"], "button": ["command_topic"], "text": ["command_topic"],
        "number": ["command_topic", "min", "max"], "event": ["state_topic", "event_types"],
    ]

    @Test func everyConfigIsAValidDiscoveryPayload() throws {
        let messages = Self.discovery.messages(for: Self.pod)
        #expect(messages.count == 2 + 2 * 40)
        var uniqueIDs = Set<String>()
        for message in messages {
            #expect(message.retain && message.qos == .atLeastOnce)
            let levels = message.topic.split(separator: "/").map(String.init)
            #expect(levels.count == 5 && levels[0] == "homeassistant" && levels[2] == "podbridge_VPOD0001" && levels[4] == "config")
            let component = levels[1]
            let config = try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
            for key in ["name", "unique_id", "device", "availability", "availability_mode"] + (Self.required[component] ?? ["?"]) {
                #expect(config[key] != nil, "\(message.topic) lacks \(key)")
            }
            let uniqueID = try #require(config["unique_id"] as? String)
            #expect(uniqueIDs.insert(uniqueID).inserted, "duplicate unique_id \(uniqueID)")
            let device = try #require(config["device"] as? [String: Any])
            #expect(device["identifiers"] as? [String] == ["podbridge_VPOD0001"])
            #expect(device["serial_number"] as? String == "VPOD0001")
            #expect(device["sw_version"] as? String == "1.0.0")
            #expect(device["model"] as? String != nil && device["manufacturer"] as? String == "podbridge")
            #expect(device["configuration_url"] as? String == "http://hub.local:8380/")
            let availability = try #require(config["availability"] as? [[String: Any]])
            #expect(availability.contains { $0["topic"] as? String == "podbridge/status" })
            #expect(config["availability_mode"] as? String == "all")
            for (key, value) in config where key.hasSuffix("_topic") {
                let topic = try #require(value as? String)
                #expect(!topic.contains("+") && !topic.contains("#") && topic.hasPrefix("podbridge/VPOD0001/"))
            }
        }
    }

    @Test func entitiesUseHomeAssistantsClassesAndUnits() throws {
        let byObject = Dictionary(uniqueKeysWithValues: Self.discovery.entities(for: Self.pod).map { ($0.object, $0) })
        func field(_ object: String, _ key: String) -> JSONValue? { byObject[object]?.config[key] }
        #expect(byObject["left_occupancy"]?.component == "binary_sensor")
        #expect(field("left_occupancy", "device_class") == "occupancy")
        #expect(field("right_heart_rate", "unit_of_measurement") == "bpm")
        #expect(field("right_heart_rate", "state_class") == "measurement")
        #expect(field("left_breathing_rate", "state_class") == "measurement")
        #expect(field("left_stage", "device_class") == "enum")
        #expect(field("left_stage", "options") == ["awake", "core", "deep", "rem", "out_of_bed"])
        #expect(field("left_in_bed_since", "device_class") == "timestamp")
        #expect(field("left_sleep_time", "device_class") == "duration")
        #expect(field("left_sleep_time", "unit_of_measurement") == "min")
        #expect(field("left_sleep_score", "state_topic") == "podbridge/VPOD0001/left/last_night")
        #expect(byObject["left_power"]?.component == "switch")
        #expect(field("left_power", "command_topic") == "podbridge/VPOD0001/left/power/set")
        #expect(byObject["left_snooze"]?.component == "button")
        #expect(byObject["right_stop_alarm"]?.component == "button")
        #expect(byObject["left_bedtime"]?.component == "text")
        #expect(field("left_wake", "pattern") == .string(HomeAssistantDiscovery.timePattern))
        #expect(byObject["right_alarm"]?.component == "switch")
        #expect(field("right_alarm", "command_topic") == "podbridge/VPOD0001/right/alarm/set")
        #expect(byObject["left_wake_window"]?.component == "number")
        #expect(field("left_wake_window", "unit_of_measurement") == "min" && field("left_wake_window", "max") == 120)
        #expect(field("right_presence_power", "state_topic") == "podbridge/VPOD0001/right/presence_power")
        // Presence-driven power's controls: switches and numbers on the side's presence_power/state.
        for (object, component, command) in [("left_presence_power_enabled", "switch", "enabled"),
                                             ("left_presence_power_away", "switch", "away"),
                                             ("right_presence_power_keep_on", "switch", "keep_on_while_occupied"),
                                             ("right_presence_power_off_when_left", "switch", "off_when_left"),
                                             ("left_presence_power_keep_on_delay", "number", "keep_on_after_leaving_minutes"),
                                             ("left_presence_power_off_delay", "number", "off_when_left_minutes"),
                                             ("left_presence_power_away_after", "number", "away_after_nights")] {
            let side = object.hasPrefix("left") ? "left" : "right"
            #expect(byObject[object]?.component == component, "\(object)")
            #expect(field(object, "command_topic") == .string("podbridge/VPOD0001/\(side)/presence_power/\(command)/set"))
            #expect(field(object, "state_topic") == .string("podbridge/VPOD0001/\(side)/presence_power/state"))
        }
        #expect(field("left_presence_power_enabled", "value_template") == "{{ 'ON' if value_json.enabled else 'OFF' }}")
        #expect(field("left_presence_power_off_delay", "min") == 3 && field("left_presence_power_off_delay", "max") == 120)
        #expect(field("left_presence_power_away_after", "min") == 0 && field("left_presence_power_away_after", "max") == 30)
        #expect(field("left_presence_power_off_delay", "entity_category") == "config")
        #expect(field("link", "device_class") == "connectivity")
        // The link entity stays available while the pod is away: it is what says so.
        if case .array(let a)? = field("link", "availability") { #expect(a.count == 1) } else { Issue.record("no availability") }
        if case .array(let a)? = field("left_occupancy", "availability") { #expect(a.count == 2) } else { Issue.record("no availability") }
    }

    /// Only what needs the pod live follows its availability; what the hub stores (last night,
    /// the schedule and its settings, the next alarm) and the events follow the hub's alone,
    /// so they stay readable and editable while the pod is unplugged.
    @Test func onlyWhatNeedsThePodLiveFollowsItsAvailability() throws {
        let live: Set<String> = ["occupancy", "heart_rate", "breathing_rate", "movement", "stage", "in_bed_since", "power",
                                 "snooze", "stop_alarm", "alarm_ringing"]
        var stored: [String] = []
        for entity in Self.discovery.entities(for: Self.pod) {
            guard case .array(let availability)? = entity.config["availability"] else { Issue.record("\(entity.object)"); continue }
            let topics = availability.compactMap { $0["topic"] }
            let side = entity.object.hasPrefix("left_") || entity.object.hasPrefix("right_")
            let thing = side ? String(entity.object.split(separator: "_", maxSplits: 1)[1]) : entity.object
            if live.contains(thing) {
                #expect(topics == ["podbridge/status", "podbridge/VPOD0001/availability"], "\(entity.object): \(topics)")
            } else {
                #expect(topics == ["podbridge/status"], "\(entity.object): \(topics)")
                stored.append(entity.object)
            }
        }
        for object in ["left_sleep_score", "left_sleep_time", "left_time_in_bed", "left_bedtime", "left_wake", "left_weekend_bedtime",
                       "left_weekend_wake", "left_alarm", "left_wake_window", "left_clear_schedule", "left_next_alarm",
                       "left_alarm_event", "left_smart_wake", "left_smart_wake_status", "left_command_result", "right_sleep_score"] {
            #expect(stored.contains(object), "\(object) follows the pod")
        }
    }

    /// Alarms, smart-wake steps and command outcomes are Home Assistant event entities, one
    /// per side, each reading its side's non-retained event topic.
    @Test func eventsAreEventEntitiesPerSide() throws {
        let byObject = Dictionary(uniqueKeysWithValues: Self.discovery.entities(for: Self.pod).map { ($0.object, $0) })
        for (object, topic, types) in [
            ("right_alarm_event", "podbridge/VPOD0001/right/alarm/event", HomeAssistantDiscovery.alarmEventTypes),
            ("left_smart_wake", "podbridge/VPOD0001/left/wake/event", HomeAssistantDiscovery.wakeEventTypes),
            ("left_command_result", "podbridge/VPOD0001/left/command/event", HomeAssistantDiscovery.commandEventTypes),
        ] {
            let entity = try #require(byObject[object])
            #expect(entity.component == "event")
            #expect(entity.config["state_topic"] == .string(topic))
            #expect(entity.config["event_types"] == .array(types.map(JSONValue.string)))
        }
        #expect(HomeAssistantDiscovery.commandEventTypes.contains("refused") && HomeAssistantDiscovery.commandEventTypes.contains("nack"))
        #expect(byObject["left_smart_wake_status"]?.config["state_topic"] == "podbridge/VPOD0001/left/wake")
        #expect(byObject["left_next_alarm"]?.config["device_class"] == "timestamp")
        #expect(byObject["left_next_alarm"]?.config["state_topic"] == "podbridge/VPOD0001/left/schedule")
        #expect(byObject["right_alarm_ringing"]?.component == "binary_sensor")
        #expect(byObject["right_alarm_ringing"]?.config["state_topic"] == "podbridge/VPOD0001/right/state")
        // Last night in full: the score's attributes, and sensors of its own.
        #expect(byObject["left_sleep_score"]?.config["json_attributes_topic"] == "podbridge/VPOD0001/left/last_night")
        #expect(byObject["left_deep_sleep"]?.config["value_template"] == "{{ value_json.stage_minutes.deep }}")
        #expect(byObject["left_sleep_efficiency"]?.config["unit_of_measurement"] == "%")
        #expect(byObject["left_time_in_bed"]?.config["device_class"] == "duration")
        #expect(byObject["left_night_heart_rate"]?.config["value_template"] == "{{ value_json.mean_heart_rate }}")
    }

    /// Weekday and weekend times are controls apart where the configuration has weekend
    /// nights; without weekend days there is one bedtime and one wake time.
    @Test func weekendTimesAreControlsOfTheirOwn() throws {
        let byObject = Dictionary(uniqueKeysWithValues: Self.discovery.entities(for: Self.pod).map { ($0.object, $0) })
        #expect(byObject["left_weekend_bedtime"]?.config["command_topic"] == "podbridge/VPOD0001/left/schedule/weekend_bedtime/set")
        #expect(byObject["left_weekend_wake"]?.config["value_template"] == "{{ value_json.weekend_wake }}")
        #expect(byObject["left_bedtime"]?.config["name"] == "Left weekday bedtime")
        let noWeekend = HomeAssistantDiscovery(topics: Self.topics, configurationURL: nil, softwareVersion: "podbridge",
                                               separateWeekend: false)
        let objects = noWeekend.entities(for: Self.pod)
        #expect(!objects.contains { $0.object.contains("weekend") })
        #expect(objects.first { $0.object == "left_bedtime" }?.config["name"] == "Left bedtime")
    }

    @Test func aOneSidedPodHasNoRightEntitiesAndNoDashboardWithoutTheAPI() {
        let d = HomeAssistantDiscovery(topics: Self.topics, configurationURL: nil, softwareVersion: "podbridge")
        let entities = d.entities(for: .init(serial: "ONE", firmware: nil, sides: 1))
        #expect(!entities.contains { $0.object.hasPrefix("right_") })
        #expect(entities.contains { $0.object == "left_occupancy" })
        if case .object(let device)? = entities[0].config["device"] {
            #expect(device["configuration_url"] == nil && device["sw_version"] == nil)
        }
    }

    @Test func timePatternMatchesWhatCommandsAccept() throws {
        let regex = try Regex(HomeAssistantDiscovery.timePattern)
        for good in ["00:00", "7:05", "23:59"] { #expect(good.wholeMatch(of: regex) != nil) }
        for bad in ["24:00", "7:5", "12:60", "1230"] { #expect(bad.wholeMatch(of: regex) == nil) }
    }
}
