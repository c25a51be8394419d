import Foundation
import Testing
import SleepDomain

@Suite struct CalendarDayTests {
    @Test func textRoundTripsAndImpossibleDatesAreRejected() throws {
        #expect(CalendarDay("2024-02-29")?.description == "2024-02-29")
        for bad in ["2023-02-29", "2024-13-01", "2024-1-01", "0000-01-01", "2024-04-31"] {
            #expect(CalendarDay(bad) == nil, "\(bad)")
        }
        let data = try JSONEncoder().encode([CalendarDay("2026-03-01")!])
        #expect(String(decoding: data, as: UTF8.self) == #"["2026-03-01"]"#)
        #expect(try JSONDecoder().decode([CalendarDay].self, from: data) == [CalendarDay("2026-03-01")!])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([CalendarDay].self, from: Data(#"["2026-02-30"]"#.utf8)) }
    }

    @Test func civilDaysAgreeWithFoundationsCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        // Foundation's Gregorian calendar is Julian before 1582-10-15; CalendarDay is proleptic
        // Gregorian, so they are compared from 1600 (day -135_140) to the year 4100.
        for days in stride(from: -135_140, to: 800_000, by: 997) {
            let c = calendar.dateComponents([.year, .month, .day, .weekday],
                                            from: Date(timeIntervalSince1970: TimeInterval(days) * 86_400))
            let day = CalendarDay(daysSinceEpoch: days)
            #expect(day.year == c.year && day.month == c.month && day.day == c.day)
            #expect(day.daysSinceEpoch == days)
            // Foundation: 1 = Sunday … 7 = Saturday.
            #expect(day.weekday.isoNumber == (c.weekday! + 5) % 7 + 1)
        }
    }
}
