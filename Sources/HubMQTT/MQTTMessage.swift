/// One MQTT message as the hub publishes or receives it: what discovery configs and state
/// payloads are built into. Pure value types.
public enum MQTTQoS: Int32, Sendable, Codable {
    case atMostOnce = 0
    case atLeastOnce = 1
}

public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool

    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    public init(topic: String, text: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.init(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain)
    }

    /// The payload as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: payload, as: UTF8.self) }
}
