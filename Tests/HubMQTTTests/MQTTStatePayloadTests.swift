import Foundation
import Hub
import HubMQTTService
import Testing

/// The retained `<side>/state`: who is on the side now, and the night under way.
@Suite struct MQTTStatePayloadTests {
    static func state(live: LiveSecond?, inBed: Bool?) throws -> [String: Any] {
        let payload = MQTTPayloads.sideState(live: live, inBed: inBed, inBedSince: Date(timeIntervalSince1970: 1_794_870_000),
                                             stage: .core, power: true)
        return try #require(JSONSerialization.jsonObject(with: Data(payload.encoded)) as? [String: Any])
    }

    static func second(present: Bool) -> LiveSecond {
        LiveSecond(time: 1_794_880_000, present: present, heartRate: present ? 58 : nil, breathingRate: present ? 14 : nil,
                   movement: 0.1, quality: 0.9)
    }

    /// Up for the bathroom: the session goes on (its gap has not passed), the side is empty now.
    /// Occupancy said `true` for the session's 20-min gap before.
    @Test func aSleeperUpInTheNightIsNotPresentButTheNightGoesOn() throws {
        let up = try Self.state(live: Self.second(present: false), inBed: true)
        #expect(up["present"] as? Bool == false)
        #expect(up["heart_rate"] is NSNull)
        #expect(up["in_bed_since"] as? String == "2026-11-16T23:00:00Z" && up["stage"] as? String == "core")
        #expect(up["power"] as? String == "ON")
        let back = try Self.state(live: Self.second(present: true), inBed: true)
        #expect(back["present"] as? Bool == true && back["heart_rate"] as? Double == 58)
    }

    /// Lying down before the session starts (it needs a few minutes of presence): present at
    /// once, no night yet. With no second yet, the session's word stands.
    @Test func presenceComesFromTheNewestSecondElseTheSession() throws {
        let lyingDown = try Self.state(live: Self.second(present: true), inBed: false)
        #expect(lyingDown["present"] as? Bool == true && lyingDown["heart_rate"] as? Double == 58)
        #expect(lyingDown["in_bed_since"] is NSNull && lyingDown["stage"] is NSNull)
        #expect(MQTTPayloads.present(live: nil, inBed: true) == true)
        #expect(MQTTPayloads.present(live: nil, inBed: nil) == false)
    }
}
