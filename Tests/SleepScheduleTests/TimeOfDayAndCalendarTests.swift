import Foundation
import Testing
@testable import SleepSchedule
import SleepDomain

@Suite struct TimeOfDayAndCalendarTests {
    @Test func parsesAndPrintsHHmm() {
        #expect(TimeOfDay("07:05")?.minuteOfDay == 425)
        #expect(TimeOfDay("00:00")?.minuteOfDay == 0)
        #expect(TimeOfDay("23:59")?.minuteOfDay == 1439)
        for bad in ["7:05", "24:00", "23:60", "0705", "ab:cd", "07:5", " 07:05", "-1:00"] {
            #expect(TimeOfDay(bad) == nil, "\(bad) must not parse")
        }
        #expect(TimeOfDay(wrapping: -10).description == "23:50")
        #expect(TimeOfDay(wrapping: 1450).description == "00:10")
        #expect(t("09:03").description == "09:03")
    }

    @Test func roundsToStepWithWrap() {
        #expect(t("06:58").rounded(toStep: 5, rule: .nearest) == t("07:00"))
        #expect(t("06:57").rounded(toStep: 5, rule: .nearest) == t("06:55"))
        #expect(t("23:58").rounded(toStep: 5, rule: .nearest) == t("00:00"))
        #expect(t("22:37").rounded(toStep: 5, rule: .down) == t("22:35"))
        #expect(t("07:26").rounded(toStep: 15, rule: .up) == t("07:30"))
        #expect(t("07:30").rounded(toStep: 15, rule: .up) == t("07:30"))
    }

    @Test func codableAsHHmmString() throws {
        let data = try JSONEncoder().encode([t("22:30")])
        #expect(String(decoding: data, as: UTF8.self) == "[\"22:30\"]")
        #expect(try JSONDecoder().decode([TimeOfDay].self, from: data) == [t("22:30")])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([TimeOfDay].self, from: Data("[\"25:00\"]".utf8)) }
    }

    @Test func localDatesAndWeekdays() {
        #expect(CalendarDay(daysSinceEpoch: 0) == date(1970, 1, 1))
        #expect(date(1970, 1, 1).weekday == .thursday)
        #expect(date(2026, 3, 8).weekday == .sunday)
        #expect(date(2026, 3, 9).weekday == .monday)
        #expect(date(2024, 2, 29).adding(days: 1) == date(2024, 3, 1))
        #expect(CalendarDay(year: 2026, month: 2, day: 29) == nil)
        #expect(CalendarDay(year: 2026, month: 13, day: 1) == nil)
        for days in [-800_000, -1, 0, 59, 20_000, 700_000] {
            #expect(CalendarDay(daysSinceEpoch: days).daysSinceEpoch == days)
        }
        #expect(date(2026, 3, 8).description == "2026-03-08")
    }

    @Test func weekdayMaskBitsAndShift() {
        #expect(WeekdayMask.monday.rawValue == 1)
        #expect(WeekdayMask.sunday.rawValue == 64)
        #expect(WeekdayMask.everyDay.rawValue == 0x7F)
        #expect(WeekdayMask.saturdayAndSunday.shifted(byDays: -1) == [.friday, .saturday])
        #expect(WeekdayMask.monday.shifted(byDays: -1) == .sunday)
        #expect(WeekdayMask.sunday.shifted(byDays: 1) == .monday)
        #expect(WeekdayMask(rawValue: 0xFF) == .everyDay)
        #expect(WeekdayMask.mondayToFriday.description == "Mon,Tue,Wed,Thu,Fri")
    }

    @Test func localDateTimeReadsThePodsZone() {
        let i = utc(2026, 1, 15, 22, 30)
        #expect(LocalDateTime(i, in: Zones.berlin).description == "2026-01-15 23:30")
        #expect(LocalDateTime(i, in: Zones.tokyo).description == "2026-01-16 07:30")
        #expect(LocalDateTime(i, in: Zones.newYork).description == "2026-01-15 17:30")
    }
}
