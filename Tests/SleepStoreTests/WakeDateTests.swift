import Foundation
import Testing
@testable import SleepStore
import SleepDomain

@Suite struct WakeDateTests {
    /// Saves nights in `zone` and returns each one's wake date as stored and as queried.
    func wakeDates(_ zone: String, _ nights: [NightRecord]) throws -> [String] {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try SleepStore(path: dir.path("w.sqlite"), timeZone: TimeZone(identifier: zone)!)
        var dates: [String] = []
        for night in nights {
            let result = try store.save(night)
            let found = try store.sessions(wakeDatesFrom: result.wakeDate, to: result.wakeDate).map(\.sourceID)
            #expect(found.contains(night.sourceID))
            dates.append(result.wakeDate.description)
        }
        return dates
    }

    func span(_ zone: String, from: (Int, Int, Int, Int, Int), to: (Int, Int, Int, Int, Int), side: BedSide = .left) -> NightRecord {
        let start = Fixtures.local(zone, from.0, from.1, from.2, from.3, from.4)
        let end = Fixtures.local(zone, to.0, to.1, to.2, to.3, to.4)
        return Fixtures.night(side: side, start: start, stages: [(.core, Int((end - start) / 30))])
    }

    @Test func overnightNapAndNightShiftBelongToTheDateTheyEnd() throws {
        let z = "America/New_York"
        let dates = try wakeDates(z, [
            span(z, from: (2024, 1, 12, 22, 0), to: (2024, 1, 13, 6, 0)),          // Fri night → Sat
            span(z, from: (2024, 1, 13, 14, 0), to: (2024, 1, 13, 16, 0)),          // Sat nap
            span(z, from: (2024, 1, 14, 8, 0), to: (2024, 1, 14, 16, 0)),           // night-shift day sleep
            span(z, from: (2024, 1, 14, 23, 0), to: (2024, 1, 15, 0, 0)),           // ends exactly at midnight
            span(z, from: (2024, 1, 15, 23, 59), to: (2024, 1, 16, 0, 1)),          // crosses midnight by minutes
            span(z, from: (2024, 1, 17, 22, 0), to: (2024, 1, 19, 10, 0)),          // over 24 h: end date
        ])
        #expect(dates == ["2024-01-13", "2024-01-13", "2024-01-14", "2024-01-15", "2024-01-16", "2024-01-19"])
    }

    @Test func dstChangesInNewYork() throws {
        let z = "America/New_York"
        // Spring forward 2024-03-10 02:00 → 03:00; fall back 2024-11-03 02:00 → 01:00.
        let spring = span(z, from: (2024, 3, 9, 23, 0), to: (2024, 3, 10, 7, 0))
        let fall = span(z, from: (2024, 11, 2, 23, 0), to: (2024, 11, 3, 7, 0))
        #expect(spring.end - spring.start == 7 * 3600)
        #expect(fall.end - fall.start == 9 * 3600)
        let lateNight = span(z, from: (2024, 11, 3, 22, 0), to: (2024, 11, 3, 23, 59), side: .right)
        #expect(try wakeDates(z, [spring, fall, lateNight]) == ["2024-03-10", "2024-11-03", "2024-11-03"])
        let cal = LocalCalendar(timeZone: TimeZone(identifier: z)!)
        #expect(cal.rfc3339(spring.start) == "2024-03-09T23:00:00-05:00")
        #expect(cal.rfc3339(spring.end) == "2024-03-10T07:00:00-04:00")
        #expect(cal.span(from: CalendarDay("2024-03-10")!, to: CalendarDay("2024-03-10")!).count == 23 * 3600)
        #expect(cal.span(from: CalendarDay("2024-11-03")!, to: CalendarDay("2024-11-03")!).count == 25 * 3600)
    }

    @Test func dstChangesInBerlin() throws {
        let z = "Europe/Berlin"
        // Spring forward 2024-03-31 02:00 → 03:00; fall back 2024-10-27 03:00 → 02:00.
        let spring = span(z, from: (2024, 3, 30, 23, 30), to: (2024, 3, 31, 7, 30))
        let fall = span(z, from: (2024, 10, 26, 23, 30), to: (2024, 10, 27, 7, 30))
        let fallNap = span(z, from: (2024, 10, 27, 13, 0), to: (2024, 10, 27, 14, 0), side: .right)
        #expect(try wakeDates(z, [spring, fall, fallNap]) == ["2024-03-31", "2024-10-27", "2024-10-27"])
        let cal = LocalCalendar(timeZone: TimeZone(identifier: z)!)
        #expect(cal.rfc3339(fall.start) == "2024-10-26T23:30:00+02:00")
        #expect(cal.rfc3339(fall.end) == "2024-10-27T07:30:00+01:00")
    }

    @Test func theSameInstantHasDifferentWakeDatesInDifferentZones() {
        let end = Fixtures.utc(2024, 6, 1, 3, 30)  // 23:30 in New York the day before, 05:30 in Berlin
        #expect(LocalCalendar(timeZone: TimeZone(identifier: "America/New_York")!).wakeDate(sessionEnd: end).description == "2024-05-31")
        #expect(LocalCalendar(timeZone: TimeZone(identifier: "Europe/Berlin")!).wakeDate(sessionEnd: end).description == "2024-06-01")
        #expect(LocalCalendar(timeZone: TimeZone(identifier: "UTC")!).rfc3339(end) == "2024-06-01T03:30:00+00:00")
    }

    @Test func dayTotalsSumEverySessionEndingThatDay() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let z = "Europe/Berlin"
        let store = try SleepStore(path: dir.path("d.sqlite"), timeZone: TimeZone(identifier: z)!)
        try store.save(Fixtures.night(start: Fixtures.local(z, 2024, 5, 3, 23), stages: [(.awake, 10), (.core, 600), (.deep, 200)]))
        try store.save(Fixtures.night(start: Fixtures.local(z, 2024, 5, 4, 14), stages: [(.core, 60), (.rem, 20)]))
        try store.save(Fixtures.night(side: .right, start: Fixtures.local(z, 2024, 5, 4, 23, 30), stages: [(.core, 100)]))
        let totals = try store.dayTotals(from: CalendarDay("2024-05-01")!, to: CalendarDay("2024-05-31")!, side: .left)
        #expect(totals.count == 1)
        let day = try #require(totals.first)
        #expect(day.date == CalendarDay("2024-05-04") && day.sessions == 2)
        #expect(day.timeInBedMinutes == 445 && day.totalSleepMinutes == 440)
        #expect(day.coreMinutes == 330 && day.deepMinutes == 100 && day.remMinutes == 10 && day.awakeMinutes == 5)
        let both = try store.dayTotals(from: CalendarDay("2024-05-01")!, to: CalendarDay("2024-05-31")!)
        #expect(both.map(\.date.description) == ["2024-05-04", "2024-05-05"])
        #expect(try store.sessions(wakeDatesFrom: CalendarDay("2024-05-05")!, to: CalendarDay("2024-05-06")!).map(\.side) == [.right])
    }

    @Test func localDateParsingRejectsImpossibleDates() {
        #expect(CalendarDay("2024-02-29") != nil)
        for bad in ["2023-02-29", "2024-13-01", "2024-1-01", "20240101", "2024-04-31", "", "abcd-ef-gh", "2024-01-01T00"] {
            #expect(CalendarDay(bad) == nil, "\(bad)")
        }
        #expect(CalendarDay("2024-12-31")!.next == CalendarDay("2025-01-01"))
        #expect(CalendarDay("2024-02-28")!.next == CalendarDay("2024-02-29"))
    }
}
