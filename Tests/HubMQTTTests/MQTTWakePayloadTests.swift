import Foundation
import Hub
import HubMQTT
import HubMQTTService
import SleepDomain
import SleepStore
import Testing

/// The retained `<side>/wake` message: what a smart wake did, in the form docs/mqtt.md shows.
@Suite struct MQTTWakePayloadTests {
    @Test func aDecidedAndFiredWakeCarriesItsWindowReasonAndMoment() throws {
        let end: Int64 = 1_794_898_800  // 2026-11-17T07:00:00Z
        let record = WakeRecord(podSerial: "POD1", side: .left, wakeDate: try #require(CalendarDay(year: 2026, month: 11, day: 17)),
                                windowStart: end - 1800, windowEnd: end, windowMinutes: 30, decidedAt: end - 1140,
                                reason: "light_sleep", stage: .core, stageProbability: 0.82, movement: 0.4,
                                heartRateRise: 3, minutesBeforeEnd: 19, triggered: true, firedAt: end - 1140)
        let notice = WakeNotice(kind: .fired, serial: "POD1", side: .left, at: Date(timeIntervalSince1970: Double(end - 1140)),
                                record: record, text: "smart wake")
        let json = try #require(JSONSerialization.jsonObject(with: Data(MQTTPayloads.wake(notice).encoded)) as? [String: Any])
        #expect(json["event"] as? String == "fired")
        #expect(json["wake_date"] as? String == "2026-11-17")
        #expect(json["window_start"] as? String == "2026-11-17T06:30:00Z")
        #expect(json["window_end"] as? String == "2026-11-17T07:00:00Z")
        #expect(json["fired_at"] as? String == "2026-11-17T06:41:00Z")
        #expect(json["reason"] as? String == "light_sleep" && json["stage"] as? String == "core")
        #expect(json["minutes_before_end"] as? Double == 19 && json["triggered"] as? Bool == true)
        #expect(json["window_minutes"] as? Double == 30 && json["repeats"] as? Double == 0)
        #expect(MQTTTopics(base: "podbridge").wake("POD1", "left") == "podbridge/POD1/left/wake")
    }

    @Test func aWindowJustOpenedHasNullsWhereNothingIsKnownYet() throws {
        let record = WakeRecord(podSerial: "POD1", side: .right, wakeDate: try #require(CalendarDay(year: 2026, month: 11, day: 17)),
                                windowStart: 1_794_897_000, windowEnd: 1_794_898_800, windowMinutes: 30)
        let notice = WakeNotice(kind: .windowOpened, serial: "POD1", side: .right, at: Date(timeIntervalSince1970: 1_794_897_000),
                                record: record, text: "window opened")
        let json = try #require(JSONSerialization.jsonObject(with: Data(MQTTPayloads.wake(notice).encoded)) as? [String: Any])
        #expect(json["event"] as? String == "window_opened")
        #expect(json["reason"] is NSNull && json["fired_at"] is NSNull && json["movement"] is NSNull)
        #expect(json["triggered"] as? Bool == false)
    }
}
