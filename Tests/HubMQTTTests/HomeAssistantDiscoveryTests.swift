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
        "number": ["command_topic", "min", "max"],
    ]

    @Test func everyConfigIsAValidDiscoveryPayload() throws {
        let messages = Self.discovery.messages(for: Self.pod)
        #expect(messages.count == 2 + 2 * 17)
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
        #expect(field("left_stage", "options") == ["awake", "core", "deep", "rem"])
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
        #expect(field("link", "device_class") == "connectivity")
        // The link entity stays available while the pod is away: it is what says so.
        if case .array(let a)? = field("link", "availability") { #expect(a.count == 1) } else { Issue.record("no availability") }
        if case .array(let a)? = field("left_occupancy", "availability") { #expect(a.count == 2) } else { Issue.record("no availability") }
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
