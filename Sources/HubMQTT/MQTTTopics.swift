/// Every topic the hub publishes or listens to, in one place (docs/mqtt.md lists them).
///
/// Under `base` (default `podbridge`), a pod is named by its USB serial and a side by
/// `left`/`right`. Serials are used as topic levels, so characters MQTT gives a meaning to
/// (`/`, `+`, `#`) and spaces are replaced by `_` (`topicLevel(_:)`). Pure: no I/O.
package struct MQTTTopics: Sendable, Hashable {
    package let base: String
    package let discoveryPrefix: String

    package init(base: String = "podbridge", discoveryPrefix: String = "homeassistant") {
        self.base = base
        self.discoveryPrefix = discoveryPrefix
    }

    // MARK: Published by the hub

    /// `online` / `offline` (the last will), retained: the hub's availability.
    package var availability: String { "\(base)/status" }
    /// Validation errors of commands (any pod), not retained.
    package var commandErrors: String { "\(base)/error" }
    /// `online` while the pod's link is up, `offline` otherwise, retained.
    package func podAvailability(_ serial: String) -> String { "\(pod(serial))/availability" }
    /// Link state, identity and counters (JSON), retained.
    package func link(_ serial: String) -> String { "\(pod(serial))/link" }
    /// Live state of one side (JSON), retained.
    package func sideState(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/state" }
    /// The side's last stored night (JSON), retained.
    package func lastNight(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/last_night" }
    /// The schedule in force for the side (JSON), retained.
    package func schedule(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/schedule" }
    /// The side's latest smart wake (JSON: window, decision, firing, repeats), retained.
    package func wake(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/wake" }
    /// Presence-driven power's last change of the side, with its reason (retained).
    package func presencePower(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/presence_power" }
    /// The side's presence-driven power in force: its switch, rules, empty nights and away (JSON), retained.
    package func presencePowerState(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/presence_power/state" }
    /// Alarm events (JSON), QoS 1, not retained.
    package func alarmEvents(_ serial: String) -> String { "\(pod(serial))/alarm/event" }
    /// The outcome of each command (the pod's ack or nack), QoS 1, not retained.
    package func commandResults(_ serial: String) -> String { "\(pod(serial))/command/result" }
    /// The side's alarm events (`event_type` fired/snoozed/stopped/failed): Home Assistant's
    /// event entity, not retained (a retained event would fire again on every HA start).
    package func sideAlarmEvents(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/alarm/event" }
    /// The side's smart-wake steps as events (`event_type` window_opened, decided, …), not retained.
    package func wakeEvents(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/wake/event" }
    /// The outcome of each command for the side as an event (`event_type` ack, nack, ok,
    /// error, refused), not retained: where Home Assistant shows what became of a press.
    package func commandEvents(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/command/event" }

    // MARK: Commands (QoS 1)

    /// What the hub subscribes to for commands: any `<base>/<serial>/<side>/<thing>/set` (so
    /// an unknown thing gets an error back) and the ones below. Not `#`: the hub's own state
    /// topics would come back to it.
    package var commandFilters: [String] {
        ["\(base)/+/+/+/set", "\(base)/+/+/schedule/+/set", "\(base)/+/+/presence_power/+/set", "\(base)/+/+/alarm/snooze",
         "\(base)/+/+/alarm/stop", "\(base)/+/+/schedule/clear"]
    }
    package func powerCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/power/set" }
    package func snoozeCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/alarm/snooze" }
    package func stopCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/alarm/stop" }
    package func bedtimeCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/schedule/bedtime/set" }
    package func wakeCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/schedule/wake/set" }
    package func weekendBedtimeCommand(_ serial: String, _ side: String) -> String {
        "\(pod(serial))/\(side)/schedule/weekend_bedtime/set"
    }
    package func weekendWakeCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/schedule/weekend_wake/set" }
    package func clearScheduleCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/schedule/clear" }
    package func alarmCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/alarm/set" }
    package func wakeWindowCommand(_ serial: String, _ side: String) -> String { "\(pod(serial))/\(side)/wake_window/set" }
    /// One setting of the side's presence-driven power (`MQTTCommand.PresencePowerField`).
    package func presencePowerCommand(_ serial: String, _ side: String, _ field: MQTTCommand.PresencePowerField) -> String {
        "\(pod(serial))/\(side)/presence_power/\(field.rawValue)/set"
    }

    // MARK: Home Assistant

    /// Home Assistant's birth/will topics: `online` on either means it (re)started and wants
    /// discovery again. HA sets its birth topic apart from its discovery prefix, and leaves it
    /// at `homeassistant/status` when only the prefix is changed: a hub listening on
    /// `<prefix>/status` alone re-announced nothing after such an HA restarted.
    package var homeAssistantStatus: [String] {
        let own = "\(discoveryPrefix)/status"
        return own == Self.homeAssistantDefaultStatus ? [own] : [own, Self.homeAssistantDefaultStatus]
    }
    /// Home Assistant's default birth topic.
    package static let homeAssistantDefaultStatus = "homeassistant/status"
    /// Every discovery config of every pod, to find stale ones: `<prefix>/<component>/podbridge_<serial>/<object>/config`.
    package var discoveryFilter: String { "\(discoveryPrefix)/+/+/+/config" }
    package func discoveryConfig(component: String, serial: String, object: String) -> String {
        "\(discoveryPrefix)/\(component)/\(nodeID(serial))/\(object)/config"
    }
    /// The node id that groups a pod's configs (HA's `<node_id>` level): `podbridge_<serial>`.
    package func nodeID(_ serial: String) -> String { "podbridge_" + Self.topicLevel(serial) }

    /// The serial in a discovery config topic of ours, or nil for anyone else's.
    package func serialInDiscoveryTopic(_ topic: String) -> String? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        let prefix = discoveryPrefix.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == prefix.count + 4, Array(levels.prefix(prefix.count)) == prefix,
              levels.last == "config" else { return nil }
        let node = levels[prefix.count + 1]
        guard node.hasPrefix("podbridge_") else { return nil }
        return String(node.dropFirst("podbridge_".count))
    }

    /// Every pod's availability under this base topic (retained, one per pod a hub announced):
    /// how the hub finds a second hub publishing under the same base topic.
    package var podAvailabilityFilter: String { "\(base)/+/availability" }

    /// The serial level of a pod availability topic under this base topic, or nil.
    package func serialInPodAvailabilityTopic(_ topic: String) -> String? {
        guard topic.hasPrefix(base + "/") else { return nil }
        let levels = topic.dropFirst(base.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 2, !levels[0].isEmpty, levels[1] == "availability" else { return nil }
        return String(levels[0])
    }

    /// The serial level and side of a command topic (`<base>/<serial>/<side>/…`), or nil when
    /// the topic names no side: where a refused command's outcome can be shown.
    package func serialAndSide(ofCommandTopic topic: String) -> (serialLevel: String, side: String)? {
        guard topic.hasPrefix(base + "/") else { return nil }
        let levels = topic.dropFirst(base.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count >= 3, !levels[0].isEmpty, levels[1] == "left" || levels[1] == "right" else { return nil }
        return (String(levels[0]), String(levels[1]))
    }

    private func pod(_ serial: String) -> String { "\(base)/\(Self.topicLevel(serial))" }

    /// A serial as one topic level (and HA id part): only letters, digits, `-` and `_` kept.
    package static func topicLevel(_ serial: String) -> String {
        String(serial.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "_" })
    }
}
