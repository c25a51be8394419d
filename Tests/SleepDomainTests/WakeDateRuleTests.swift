import Foundation
import Testing
import SleepDomain

/// The one wake-date rule (LocalCalendar): a session belongs to the local date of its end.
@Suite struct WakeDateRuleTests {
    let newYork = LocalCalendar(timeZone: TimeZone(identifier: "America/New_York")!)

    @Test func aNightEndingExactlyAtLocalMidnightBelongsToTheNewDay() {
        let midnight = newYork.startOfDay(CalendarDay("2024-01-15")!)
        #expect(newYork.rfc3339(midnight) == "2024-01-15T00:00:00-05:00")
        #expect(newYork.wakeDate(sessionEnd: midnight) == CalendarDay("2024-01-15"))
        #expect(newYork.wakeDate(sessionEnd: Double(midnight)) == CalendarDay("2024-01-15"))
        #expect(newYork.wakeDate(sessionEnd: midnight - 1) == CalendarDay("2024-01-14"))
    }

    @Test func localDateFollowsTheZonesOffsetAcrossDST() {
        // 2024-03-10 02:00 EST → 03:00 EDT: 06:59:59Z is 01:59:59 EST, 07:00Z is 03:00 EDT.
        #expect(newYork.rfc3339(1_710_053_999) == "2024-03-10T01:59:59-05:00")
        #expect(newYork.rfc3339(1_710_054_000) == "2024-03-10T03:00:00-04:00")
        #expect(newYork.localDate(ofUnix: 1_710_046_799) == CalendarDay("2024-03-09"))
        #expect(newYork.localDate(ofUnix: 1_710_046_800) == CalendarDay("2024-03-10"))
        #expect(newYork.span(from: CalendarDay("2024-03-10")!, to: CalendarDay("2024-03-10")!).count == 23 * 3600)
    }

    @Test func localDateTimeAgreesWithTheCalendar() {
        for unix in stride(from: Int64(1_704_067_200), to: 1_704_067_200 + 400 * 86_400, by: 3_607) {
            let seen = LocalDateTime(Date(timeIntervalSince1970: TimeInterval(unix)), in: newYork.timeZone)
            #expect(seen.date == newYork.localDate(ofUnix: unix))
        }
    }
}
