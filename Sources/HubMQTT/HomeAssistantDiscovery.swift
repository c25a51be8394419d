import Foundation
import SleepDomain
/// Home Assistant MQTT discovery configs for one pod: one HA device per pod, its entities
/// per side, all reading the hub's state topics and writing its command topics
/// (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery).
///
/// Every config is retained at `<prefix>/<component>/podbridge_<serial>/<object>/config`.
/// Every entity follows the hub's availability (its last will); only what needs the pod live
/// (occupancy, vitals, stage, power, the alarm's ringing, snooze and stop) also follows the
/// pod's (`availability_mode: all`). What the hub stores (last night, the schedule and its
/// settings, the next alarm) and the events stay available, and editable, while the pod is
/// away: the hub pushes the changes when it comes back. Pure.
package struct HomeAssistantDiscovery: Sendable {
    package struct Pod: Sendable, Hashable {
        package var serial: String
        package var firmware: String?
        package var sides: Int
        package init(serial: String, firmware: String?, sides: Int) {
            self.serial = serial
            self.firmware = firmware
            self.sides = sides
        }
    }

    package struct Entity: Sendable, Hashable {
        /// `binary_sensor`, `sensor`, `switch`, `button`, `text`, `number`.
        package var component: String
        /// Unique within the pod: `left_heart_rate`, `link`, …
        package var object: String
        package var config: JSONValue
    }

    package let topics: MQTTTopics
    /// The dashboard (the API's root) when the API is on: the device's `configuration_url`.
    package let configurationURL: String?
    package let softwareVersion: String
    /// Whether weekend nights have times of their own (the configuration names weekend wake
    /// days): then the weekend bedtime and wake are controls apart from the weekday ones.
    package let separateWeekend: Bool

    package init(topics: MQTTTopics, configurationURL: String?, softwareVersion: String, separateWeekend: Bool = true) {
        self.topics = topics
        self.configurationURL = configurationURL
        self.softwareVersion = softwareVersion
        self.separateWeekend = separateWeekend
    }

    /// The event types of each side's event entities (the `event_type` of their payloads).
    package static let alarmEventTypes = ["fired", "snoozed", "stopped", "failed"]
    package static let wakeEventTypes = ["window_opened", "decided", "trigger_failed", "fired", "snoozed", "repeated",
                                         "out_of_bed", "back_in_bed"]
    package static let commandEventTypes = ["ack", "nack", "ok", "error", "refused"]
    /// The stage sensor's values: the night's stages, and an empty bed.
    package static let stageOptions = ["awake", "core", "deep", "rem", "out_of_bed"]

    /// A switch of presence-driven power: ON/OFF to its command topic, its state from the
    /// side's retained `presence_power/state`.
    private func presencePowerSwitch(_ serial: String, _ side: String, _ field: MQTTCommand.PresencePowerField, _ key: String,
                                     icon: String, config: Bool = false) -> [String: JSONValue] {
        var c: [String: JSONValue] = [
            "command_topic": .string(topics.presencePowerCommand(serial, side, field)),
            "state_topic": .string(topics.presencePowerState(serial, side)),
            "value_template": .string("{{ 'ON' if value_json.\(key) else 'OFF' }}"),
            "payload_on": "ON", "payload_off": "OFF", "state_on": "ON", "state_off": "OFF", "icon": .string(icon),
        ]
        if config { c["entity_category"] = "config" }
        return c
    }

    /// A number of presence-driven power (minutes or nights), within the range the hub accepts.
    private func presencePowerNumber(_ serial: String, _ side: String, _ field: MQTTCommand.PresencePowerField, _ key: String,
                                     _ range: ClosedRange<Int>, unit: String?, icon: String) -> [String: JSONValue] {
        var c: [String: JSONValue] = [
            "command_topic": .string(topics.presencePowerCommand(serial, side, field)),
            "state_topic": .string(topics.presencePowerState(serial, side)),
            "value_template": .string("{{ value_json.\(key) }}"),
            "min": .number(Double(range.lowerBound)), "max": .number(Double(range.upperBound)), "step": 1, "mode": "box",
            "entity_category": "config", "icon": .string(icon),
        ]
        if let unit { c["unit_of_measurement"] = .string(unit) }
        return c
    }

    /// The retained config messages announcing `pod`.
    package func messages(for pod: Pod) -> [MQTTMessage] {
        entities(for: pod).map {
            MQTTMessage(topic: topics.discoveryConfig(component: $0.component, serial: pod.serial, object: $0.object),
                        payload: $0.config.encoded, qos: .atLeastOnce, retain: true)
        }
    }

    /// Whether a retained config was announced by a hub on these topics: its availability
    /// names this base topic's `status`. Another hub's (another base topic) is not ours to remove.
    package static func isAnnounced(by topics: MQTTTopics, config payload: [UInt8]) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any],
              let availability = object["availability"] as? [[String: Any]] else { return false }
        return availability.contains { $0["topic"] as? String == topics.availability }
    }

    /// The empty retained message that removes one config (and its entity) from HA.
    package static func removal(topic: String) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: [], qos: .atLeastOnce, retain: true)
    }

    package func entities(for pod: Pod) -> [Entity] {
        let serial = pod.serial
        let node = topics.nodeID(serial)
        var device: [String: JSONValue] = [
            "identifiers": [.string(node)],
            "name": .string("Sleep pod \(serial)"),
            "manufacturer": "podbridge",
            "model": .string("Sleep pod, \(pod.sides) side\(pod.sides == 1 ? "" : "s")"),
            "serial_number": .string(serial),
        ]
        if let firmware = pod.firmware { device["sw_version"] = .string(firmware) }
        if let configurationURL { device["configuration_url"] = .string(configurationURL) }
        let hubOnly: JSONValue = [["topic": .string(topics.availability)]]
        let hubAndPod: JSONValue = [["topic": .string(topics.availability)], ["topic": .string(topics.podAvailability(serial))]]

        func entity(_ component: String, _ object: String, name: String, podAvailability: Bool = false,
                    _ fields: [String: JSONValue]) -> Entity {
            var config = fields
            config["name"] = .string(name)
            config["unique_id"] = .string("\(node)_\(object)")
            config["device"] = .object(device)
            config["origin"] = ["name": "podbridge", "sw_version": .string(softwareVersion)]
            config["availability"] = podAvailability ? hubAndPod : hubOnly
            config["availability_mode"] = "all"
            config["qos"] = 1
            return Entity(component: component, object: object, config: .object(config))
        }

        var list: [Entity] = [
            entity("binary_sensor", "link", name: "Link", podAvailability: false, [
                "state_topic": .string(topics.link(serial)),
                "value_template": "{{ 'ON' if value_json.connected else 'OFF' }}",
                "device_class": "connectivity", "entity_category": "diagnostic",
            ]),
            entity("sensor", "dropped_frames", name: "Dropped frames", podAvailability: false, [
                "state_topic": .string(topics.link(serial)),
                "value_template": "{{ value_json.counters.dropped_frames }}",
                "state_class": "total_increasing", "entity_category": "diagnostic", "icon": "mdi:lan-disconnect",
            ]),
        ]
        for side in ["left", "right"].prefix(max(1, min(2, pod.sides))) {
            let title = side == "left" ? "Left" : "Right"
            let state = JSONValue.string(topics.sideState(serial, side))
            let night = JSONValue.string(topics.lastNight(serial, side))
            let schedule = JSONValue.string(topics.schedule(serial, side))
            /// A sensor of the last night's payload (`path` into its JSON).
            func nightSensor(_ object: String, _ label: String, _ path: String, unit: String? = nil, duration: Bool = false,
                             icon: String, precision: Int = 0) -> Entity {
                var fields: [String: JSONValue] = [
                    "state_topic": night, "value_template": .string("{{ value_json.\(path) }}"),
                    "state_class": "measurement", "icon": .string(icon), "suggested_display_precision": .number(Double(precision)),
                ]
                if duration {
                    fields["device_class"] = "duration"
                    fields["unit_of_measurement"] = "min"
                } else if let unit {
                    fields["unit_of_measurement"] = .string(unit)
                }
                return entity("sensor", "\(side)_\(object)", name: "\(title) \(label)", fields)
            }
            /// An event entity: each message on `topic` is one event, `event_type` its kind.
            func event(_ object: String, _ label: String, _ topic: String, _ types: [String], icon: String) -> Entity {
                entity("event", "\(side)_\(object)", name: "\(title) \(label)", [
                    "state_topic": .string(topic), "event_types": .array(types.map(JSONValue.string)), "icon": .string(icon),
                ])
            }
            list += [
                entity("binary_sensor", "\(side)_occupancy", name: "\(title) occupancy", podAvailability: true, [
                    "state_topic": state, "value_template": "{{ 'ON' if value_json.present else 'OFF' }}",
                    "device_class": "occupancy",
                ]),
                entity("sensor", "\(side)_heart_rate", name: "\(title) heart rate", podAvailability: true, [
                    "state_topic": state, "value_template": "{{ value_json.heart_rate }}",
                    "unit_of_measurement": "bpm", "state_class": "measurement", "icon": "mdi:heart-pulse",
                    "suggested_display_precision": 0,
                ]),
                entity("sensor", "\(side)_breathing_rate", name: "\(title) breathing rate", podAvailability: true, [
                    "state_topic": state, "value_template": "{{ value_json.breathing_rate }}",
                    "unit_of_measurement": "breaths/min", "state_class": "measurement", "icon": "mdi:lungs",
                    "suggested_display_precision": 1,
                ]),
                entity("sensor", "\(side)_movement", name: "\(title) movement", podAvailability: true, [
                    "state_topic": state, "value_template": "{{ value_json.movement }}",
                    "state_class": "measurement", "icon": "mdi:motion-sensor", "suggested_display_precision": 2,
                ]),
                entity("sensor", "\(side)_stage", name: "\(title) sleep stage", podAvailability: true, [
                    "state_topic": state, "value_template": "{{ value_json.stage }}",
                    "device_class": "enum", "options": .array(Self.stageOptions.map(JSONValue.string)), "icon": "mdi:sleep",
                ]),
                entity("sensor", "\(side)_in_bed_since", name: "\(title) in bed since", podAvailability: true, [
                    "state_topic": state, "value_template": "{{ value_json.in_bed_since }}",
                    "device_class": "timestamp",
                ]),
                entity("sensor", "\(side)_sleep_score", name: "\(title) sleep score", [
                    "state_topic": night, "value_template": "{{ value_json.score }}",
                    "state_class": "measurement", "icon": "mdi:star-circle",
                    // The whole night (wake date, stage minutes, means) as the score's attributes.
                    "json_attributes_topic": night,
                ]),
                nightSensor("time_in_bed", "time in bed", "time_in_bed_minutes", duration: true, icon: "mdi:bed-clock"),
                nightSensor("sleep_efficiency", "sleep efficiency", "efficiency", unit: "%", icon: "mdi:percent", precision: 1),
                nightSensor("deep_sleep", "deep sleep", "stage_minutes.deep", duration: true, icon: "mdi:sleep"),
                nightSensor("rem_sleep", "REM sleep", "stage_minutes.rem", duration: true, icon: "mdi:sleep"),
                nightSensor("core_sleep", "core sleep", "stage_minutes.core", duration: true, icon: "mdi:sleep"),
                nightSensor("awake_time", "awake in bed", "stage_minutes.awake", duration: true, icon: "mdi:eye"),
                nightSensor("night_heart_rate", "mean heart rate last night", "mean_heart_rate", unit: "bpm",
                            icon: "mdi:heart-pulse", precision: 0),
                nightSensor("night_breathing_rate", "mean breathing rate last night", "mean_breathing_rate",
                            unit: "breaths/min", icon: "mdi:lungs", precision: 1),
                entity("sensor", "\(side)_sleep_time", name: "\(title) sleep time", [
                    "state_topic": night, "value_template": "{{ value_json.total_sleep_minutes }}",
                    "device_class": "duration", "unit_of_measurement": "min", "state_class": "measurement",
                ]),
                entity("switch", "\(side)_power", name: "\(title) power", podAvailability: true, [
                    "command_topic": .string(topics.powerCommand(serial, side)),
                    "state_topic": state, "value_template": "{{ value_json.power }}",
                    "payload_on": "ON", "payload_off": "OFF", "state_on": "ON", "state_off": "OFF",
                    "device_class": "switch",
                ]),
                entity("button", "\(side)_snooze", name: "\(title) snooze alarm", podAvailability: true, [
                    "command_topic": .string(topics.snoozeCommand(serial, side)), "payload_press": "PRESS", "icon": "mdi:alarm-snooze",
                ]),
                entity("button", "\(side)_stop_alarm", name: "\(title) stop alarm", podAvailability: true, [
                    "command_topic": .string(topics.stopCommand(serial, side)), "payload_press": "PRESS", "icon": "mdi:alarm-off",
                ]),
                entity("text", "\(side)_bedtime", name: "\(title) \(separateWeekend ? "weekday bedtime" : "bedtime")", [
                    "command_topic": .string(topics.bedtimeCommand(serial, side)),
                    "state_topic": schedule, "value_template": "{{ value_json.bedtime }}",
                    "pattern": .string(Self.timePattern), "min": 4, "max": 5, "icon": "mdi:bed-clock",
                ]),
                entity("text", "\(side)_wake", name: "\(title) \(separateWeekend ? "weekday wake time" : "wake time")", [
                    "command_topic": .string(topics.wakeCommand(serial, side)),
                    "state_topic": schedule, "value_template": "{{ value_json.wake }}",
                    "pattern": .string(Self.timePattern), "min": 4, "max": 5, "icon": "mdi:alarm",
                ]),
                entity("switch", "\(side)_alarm", name: "\(title) alarm", [
                    "command_topic": .string(topics.alarmCommand(serial, side)),
                    "state_topic": schedule, "value_template": "{{ 'ON' if value_json.alarm_enabled else 'OFF' }}",
                    "payload_on": "ON", "payload_off": "OFF", "state_on": "ON", "state_off": "OFF", "icon": "mdi:alarm",
                ]),
                entity("number", "\(side)_wake_window", name: "\(title) smart-wake window", [
                    "command_topic": .string(topics.wakeWindowCommand(serial, side)),
                    "state_topic": schedule, "value_template": "{{ value_json.wake_window_minutes }}",
                    "min": 0, "max": 120, "step": 5, "mode": "box", "unit_of_measurement": "min", "icon": "mdi:timer-sand",
                ]),
                entity("sensor", "\(side)_presence_power", name: "\(title) presence power", [
                    "state_topic": .string(topics.presencePower(serial, side)), "value_template": "{{ value_json.text }}",
                    "json_attributes_topic": .string(topics.presencePower(serial, side)), "icon": "mdi:bed-clock",
                ]),
                entity("switch", "\(side)_presence_power_enabled", name: "\(title) presence-driven power",
                       presencePowerSwitch(serial, side, .enabled, "enabled", icon: "mdi:bed-clock")),
                entity("switch", "\(side)_presence_power_away", name: "\(title) away",
                       presencePowerSwitch(serial, side, .away, "away", icon: "mdi:bag-suitcase")),
                entity("switch", "\(side)_presence_power_keep_on", name: "\(title) keep on while in bed",
                       presencePowerSwitch(serial, side, .keepOnWhileOccupied, "keep_on_while_occupied", icon: "mdi:bed",
                                           config: true)),
                entity("number", "\(side)_presence_power_keep_on_delay", name: "\(title) keep-on off delay",
                       presencePowerNumber(serial, side, .keepOnAfterLeavingMinutes, "keep_on_after_leaving_minutes",
                                           PresencePowerSettings.keepOnAfterLeavingRange, unit: "min", icon: "mdi:timer-outline")),
                entity("switch", "\(side)_presence_power_off_when_left", name: "\(title) off when bed left",
                       presencePowerSwitch(serial, side, .offWhenLeft, "off_when_left", icon: "mdi:bed-empty", config: true)),
                entity("number", "\(side)_presence_power_off_delay", name: "\(title) off when bed left after",
                       presencePowerNumber(serial, side, .offWhenLeftMinutes, "off_when_left_minutes",
                                           PresencePowerSettings.offWhenLeftRange, unit: "min", icon: "mdi:timer-outline")),
                entity("number", "\(side)_presence_power_away_after", name: "\(title) away after empty nights",
                       presencePowerNumber(serial, side, .awayAfterNights, "away_after_nights",
                                           0...PresencePowerSettings.awayAfterNightsRange.upperBound, unit: nil,
                                           icon: "mdi:calendar-remove")),
                entity("button", "\(side)_clear_schedule", name: "\(title) back to learned schedule", [
                    "command_topic": .string(topics.clearScheduleCommand(serial, side)), "payload_press": "PRESS",
                    "icon": "mdi:calendar-refresh",
                ]),
                entity("binary_sensor", "\(side)_alarm_ringing", name: "\(title) alarm ringing", podAvailability: true, [
                    "state_topic": state, "value_template": "{{ 'ON' if value_json.alarm_ringing else 'OFF' }}",
                    "icon": "mdi:alarm-light",
                ]),
                entity("sensor", "\(side)_next_alarm", name: "\(title) next alarm", [
                    "state_topic": schedule, "value_template": "{{ value_json.next_alarm }}", "device_class": "timestamp",
                ]),
                event("alarm_event", "alarm", topics.sideAlarmEvents(serial, side), Self.alarmEventTypes, icon: "mdi:alarm-bell"),
                event("smart_wake", "smart wake", topics.wakeEvents(serial, side), Self.wakeEventTypes, icon: "mdi:weather-sunset-up"),
                // The latest step, retained: what the smart wake is at, also after Home Assistant restarts.
                entity("sensor", "\(side)_smart_wake_status", name: "\(title) smart wake status", [
                    "state_topic": .string(topics.wake(serial, side)), "value_template": "{{ value_json.event }}",
                    "device_class": "enum", "options": .array(Self.wakeEventTypes.map(JSONValue.string)),
                    "json_attributes_topic": .string(topics.wake(serial, side)), "icon": "mdi:weather-sunset-up",
                ]),
                event("command_result", "command result", topics.commandEvents(serial, side), Self.commandEventTypes,
                      icon: "mdi:message-reply-text"),
            ]
            if separateWeekend {
                list += [
                    entity("text", "\(side)_weekend_bedtime", name: "\(title) weekend bedtime", [
                        "command_topic": .string(topics.weekendBedtimeCommand(serial, side)),
                        "state_topic": schedule, "value_template": "{{ value_json.weekend_bedtime }}",
                        "pattern": .string(Self.timePattern), "min": 4, "max": 5, "icon": "mdi:bed-clock",
                    ]),
                    entity("text", "\(side)_weekend_wake", name: "\(title) weekend wake time", [
                        "command_topic": .string(topics.weekendWakeCommand(serial, side)),
                        "state_topic": schedule, "value_template": "{{ value_json.weekend_wake }}",
                        "pattern": .string(Self.timePattern), "min": 4, "max": 5, "icon": "mdi:alarm",
                    ]),
                ]
            }
        }
        return list
    }

    /// `H:mm` or `HH:mm`, 00:00–23:59 (what the command parser accepts).
    package static let timePattern = "^([01]?[0-9]|2[0-3]):[0-5][0-9]$"
}
