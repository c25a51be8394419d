import Foundation
import Hub
import SleepDomain
import SleepSchedule
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
        // The night goes on, but the bed is empty now: its stage says so, not the last stage.
        #expect(up["in_bed_since"] as? String == "2026-11-16T23:00:00Z" && up["stage"] as? String == "out_of_bed")
        #expect(up["power"] as? String == "ON")
        let back = try Self.state(live: Self.second(present: true), inBed: true)
        #expect(back["present"] as? Bool == true && back["heart_rate"] as? Double == 58 && back["stage"] as? String == "core")
    }

    /// Lying down before the session starts (it needs a few minutes of presence): present at
    /// once, no night yet. With no second yet, the session's word stands.
    @Test func presenceComesFromTheNewestSecondElseTheSession() throws {
        let lyingDown = try Self.state(live: Self.second(present: true), inBed: false)
        #expect(lyingDown["present"] as? Bool == true && lyingDown["heart_rate"] as? Double == 58)
        #expect(lyingDown["in_bed_since"] is NSNull && lyingDown["stage"] is NSNull)
        // Nobody there: an empty bed's stage reads as such.
        let empty = try Self.state(live: Self.second(present: false), inBed: false)
        #expect(empty["stage"] as? String == "out_of_bed" && empty["in_bed_since"] is NSNull && empty["alarm_ringing"] as? Bool == false)
        #expect(MQTTPayloads.present(live: nil, inBed: true) == true)
        #expect(MQTTPayloads.present(live: nil, inBed: nil) == false)
    }

    /// The next alarm: today's when it is still ahead, else the next day the alarm rings on,
    /// at its local time (a DST change between keeps the wall-clock time).
    @Test func theNextAlarmIsTheNextDayItRingsOnAtItsLocalTime() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let weekdays = AlarmEntry(days: .mondayToFriday, time: try #require(TimeOfDay("07:00")), intensity: 60, pattern: .rise,
                                  durationSeconds: 120)
        // 2026-11-16 is a Monday: at 22:00 the next is Tuesday 07:00.
        let monday22 = Date(timeIntervalSince1970: 1_794_866_400)
        #expect(MQTTPayloads.nextAlarm([weekdays], zone: utc, after: monday22)?.ISO8601Format() == "2026-11-17T07:00:00Z")
        // Friday 07:30: the weekday alarm next rings on Monday.
        let friday0730 = Date(timeIntervalSince1970: 1_795_159_800)  // 2026-11-20T07:30:00Z
        #expect(MQTTPayloads.nextAlarm([weekdays], zone: utc, after: friday0730)?.ISO8601Format() == "2026-11-23T07:00:00Z",
                "\(friday0730.ISO8601Format())")
        #expect(MQTTPayloads.nextAlarm([], zone: utc, after: monday22) == nil)
        // Berlin, the night the clocks go back (2026-10-25): 07:00 local is 06:00Z.
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        let everyDay = AlarmEntry(days: .everyDay, time: try #require(TimeOfDay("07:00")), intensity: 60, pattern: .rise,
                                  durationSeconds: 120)
        let saturdayNight = Date(timeIntervalSince1970: 1_792_879_200)  // 2026-10-24T22:00:00Z, midnight in Berlin
        #expect(MQTTPayloads.nextAlarm([everyDay], zone: berlin, after: saturdayNight)?.ISO8601Format() == "2026-10-25T06:00:00Z")
    }
}
