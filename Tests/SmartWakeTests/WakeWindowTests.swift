import Foundation
import SleepDomain
import Testing
import SleepSchedule
@testable import SmartWake

let newYork = TimeZone(identifier: "America/New_York")!
let berlin = TimeZone(identifier: "Europe/Berlin")!

func t(_ text: String) -> TimeOfDay { TimeOfDay(text)! }
func day(_ y: Int, _ m: Int, _ d: Int) -> CalendarDay { CalendarDay(year: y, month: m, day: d)! }
func utc(_ y: Int, _ m: Int, _ d: Int, _ h: Int, _ min: Int) -> Date {
    Date(timeIntervalSince1970: Double(day(y, m, d).daysSinceEpoch) * 86_400 + Double(h * 3600 + min * 60))
}
func window(_ end: String, _ minutes: Int) -> WakeWindow { WakeWindow(end: t(end), minutes: minutes)! }

@Suite struct WakeWindowTests {
    @Test func lengthOutsideOneToMaximumIsRejected() {
        #expect(WakeWindow(end: t("07:00"), minutes: 0) == nil)
        #expect(WakeWindow(end: t("07:00"), minutes: -5) == nil)
        #expect(WakeWindow(end: t("07:00"), minutes: WakeWindow.maximumMinutes + 1) == nil)
        #expect(WakeWindow(end: t("07:00"), minutes: WakeWindow.maximumMinutes) != nil)
    }

    @Test func decodingChecksTheLength() throws {
        let good = try JSONDecoder().decode(WakeWindow.self, from: Data(#"{"end":"06:45","minutes":30}"#.utf8))
        #expect(good == window("06:45", 30))
        #expect(try JSONDecoder().decode(WakeWindow.self, from: JSONEncoder().encode(good)) == good)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(WakeWindow.self, from: Data(#"{"end":"06:45","minutes":0}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(WakeWindow.self, from: Data(#"{"end":"6:45","minutes":30}"#.utf8))
        }
    }

    @Test func ordinaryDayIsThirtyWallMinutesBeforeTheAlarm() {
        let w = window("07:00", 30).interval(endingOn: day(2026, 1, 15), in: newYork)
        #expect(w.start == utc(2026, 1, 15, 11, 30))
        #expect(w.end == utc(2026, 1, 15, 12, 0))
    }

    @Test func windowJustAfterMidnightOpensTheEveningBefore() {
        let w = window("00:10", 30).interval(endingOn: day(2026, 1, 15), in: berlin)
        #expect(w.start == utc(2026, 1, 14, 22, 40))
        #expect(w.end == utc(2026, 1, 14, 23, 10))
    }

    @Test func springForwardWindowLosesTheSkippedWallMinutes() {
        // 2026-03-08 New York: 02:00 EST jumps to 03:00 EDT (07:00 UTC). A 02:40–03:10 window
        // opens at 03:00 EDT (02:40–03:00 do not exist) and ends at 03:10 EDT.
        let w = window("03:10", 30).interval(endingOn: day(2026, 3, 8), in: newYork)
        #expect(w.start == utc(2026, 3, 8, 7, 0))
        #expect(w.end == utc(2026, 3, 8, 7, 10))
        #expect(LocalDateTime(w.end, in: newYork).timeOfDay == t("03:10"))
        // A window across the gap that starts before it keeps its real start: 01:45 EST.
        let wide = window("03:15", 90).interval(endingOn: day(2026, 3, 8), in: newYork)
        #expect(wide.start == utc(2026, 3, 8, 6, 45))
        #expect(wide.duration == 30 * 60)
    }

    @Test func springForwardWindowInsideTheGapIsEmptyAndFiresAtTheTransition() {
        let w = window("02:30", 20).interval(endingOn: day(2026, 3, 8), in: newYork)
        #expect(w.start == w.end)
        #expect(w.end == utc(2026, 3, 8, 7, 0))
    }

    @Test func fallBackWindowIsNeverLongerThanItsWallLength() {
        // 2026-11-01 New York: 02:00 EDT goes back to 01:00 EST; 01:00–02:00 happens twice.
        // Alarm 01:45 fires at its first occurrence (05:45 UTC); its window opens at 01:15 EDT.
        let first = window("01:45", 30).interval(endingOn: day(2026, 11, 1), in: newYork)
        #expect(first.start == utc(2026, 11, 1, 5, 15))
        #expect(first.end == utc(2026, 11, 1, 5, 45))
        // Alarm 02:00 EST (07:00 UTC): 01:00 happens at 05:00 and 06:00 UTC; the window opens at
        // the second, 60 real minutes before the end, not 120.
        let after = window("02:00", 60).interval(endingOn: day(2026, 11, 1), in: newYork)
        #expect(after.start == utc(2026, 11, 1, 6, 0))
        #expect(after.end == utc(2026, 11, 1, 7, 0))
        // Alarm 02:10 EST (07:10 UTC) with 90 min: the wall start 00:40 EDT lies before the
        // repeated hour, 150 real minutes back; the window is its 90 minutes, from 01:40 EDT.
        let across = window("02:10", 90).interval(endingOn: day(2026, 11, 1), in: newYork)
        #expect(across.start == utc(2026, 11, 1, 5, 40))
        #expect(across.end == utc(2026, 11, 1, 7, 10))
    }

    @Test func nextIntervalFindsTheAlarmsDateAndSkipsMaskedDays() throws {
        // 2026-01-15 is a Thursday; weekdays only, asked on Friday evening → Monday.
        let w = window("07:00", 30)
        let next = try #require(w.nextInterval(days: .mondayToFriday, after: utc(2026, 1, 16, 23, 0), in: newYork))
        #expect(next.end == utc(2026, 1, 19, 12, 0))
        #expect(next.start == utc(2026, 1, 19, 11, 30))
        #expect(w.nextInterval(days: [], after: utc(2026, 1, 16, 23, 0), in: newYork) == nil)
        // Inside today's window, the next end is today's.
        let inside = try #require(w.nextInterval(days: .everyDay, after: utc(2026, 1, 15, 11, 40), in: newYork))
        #expect(inside.end == utc(2026, 1, 15, 12, 0))
    }
}
