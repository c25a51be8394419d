/// Message type codes (firmware-protocol.md §6).
///
/// Requests travel hub → pod (0x01–0x0F) and each gets exactly one response whose type
/// is the request's with bit 7 set. Streamed messages and events travel pod → hub
/// (0x10–0x1F) and are never answered. 0x00 and 0x20–0x7F are reserved.
public enum MessageType: UInt8, Sendable, Hashable, CaseIterable {
    // Requests (hub → pod)
    case hello = 0x01
    case ping = 0x02
    case getStatus = 0x03
    case setClock = 0x04
    case setPowerSchedule = 0x05
    case setAlarm = 0x06
    case clearAlarm = 0x07
    case snooze = 0x08
    case startStream = 0x09
    case stopStream = 0x0A
    case setPower = 0x0B
    case getSchedule = 0x0C
    /// v1.1: fire a side's alarm now (smart wake); feature bit 7.
    case triggerAlarm = 0x0D
    // Streams and events (pod → hub)
    case piezo = 0x10
    case capacitance = 0x11
    case environment = 0x12
    case event = 0x13
    case log = 0x14

    /// Bit set in a response's type.
    public static let responseBit: UInt8 = 0x80

    public var isRequest: Bool { rawValue < 0x10 }
    public var isStreamed: Bool { rawValue >= 0x10 && rawValue < 0x20 }
    /// The type code of this request's response.
    public var responseCode: UInt8 { rawValue | Self.responseBit }
}
