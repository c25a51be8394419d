import Foundation
import Testing
@testable import SleepSchedule
import SleepDomain

@Suite struct LocalTimeResolverTests {
    @Test func ordinaryDayIsExact() {
        let r = LocalTimeResolver.resolve(t("07:00"), on: date(2026, 1, 15), in: Zones.newYork)
        #expect(r == .exact(utc(2026, 1, 15, 12, 0)))
    }

    @Test func springForwardGapNewYork() {
        // 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00 UTC).
        let r = LocalTimeResolver.resolve(t("02:30"), on: date(2026, 3, 8), in: Zones.newYork)
        #expect(r == .skipped(firesAt: utc(2026, 3, 8, 7, 0)))
        #expect(LocalDateTime(r.fireInstant, in: Zones.newYork).timeOfDay == t("03:00"))
        // The minutes either side of the gap are exact.
        #expect(LocalTimeResolver.resolve(t("01:59"), on: date(2026, 3, 8), in: Zones.newYork) == .exact(utc(2026, 3, 8, 6, 59)))
        #expect(LocalTimeResolver.resolve(t("03:00"), on: date(2026, 3, 8), in: Zones.newYork) == .exact(utc(2026, 3, 8, 7, 0)))
        #expect(LocalTimeResolver.resolve(t("02:00"), on: date(2026, 3, 8), in: Zones.newYork) == .skipped(firesAt: utc(2026, 3, 8, 7, 0)))
    }

    @Test func fallBackHourNewYork() {
        // 2026-11-01: 02:00 EDT goes back to 01:00 EST; 01:30 happens twice.
        let r = LocalTimeResolver.resolve(t("01:30"), on: date(2026, 11, 1), in: Zones.newYork)
        #expect(r == .repeated(first: utc(2026, 11, 1, 5, 30), second: utc(2026, 11, 1, 6, 30)))
        #expect(r.fireInstant == utc(2026, 11, 1, 5, 30))
        #expect(LocalTimeResolver.resolve(t("02:00"), on: date(2026, 11, 1), in: Zones.newYork) == .exact(utc(2026, 11, 1, 7, 0)))
    }

    @Test func springForwardGapBerlin() {
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00 UTC).
        let r = LocalTimeResolver.resolve(t("02:15"), on: date(2026, 3, 29), in: Zones.berlin)
        #expect(r == .skipped(firesAt: utc(2026, 3, 29, 1, 0)))
    }

    @Test func fallBackHourBerlin() {
        // 2026-10-25: 03:00 CEST goes back to 02:00 CET; 02:30 happens twice.
        let r = LocalTimeResolver.resolve(t("02:30"), on: date(2026, 10, 25), in: Zones.berlin)
        #expect(r == .repeated(first: utc(2026, 10, 25, 0, 30), second: utc(2026, 10, 25, 1, 30)))
    }

    @Test func repeatedTimeFiresOnlyOnce() throws {
        let days = WeekdayMask.everyDay
        let first = try #require(LocalTimeResolver.nextFiring(of: t("01:30"), days: days, after: utc(2026, 11, 1, 4, 0), in: Zones.newYork))
        #expect(first == utc(2026, 11, 1, 5, 30))
        // Just after the first occurrence the next firing is the next day, not the second 01:30.
        let next = try #require(LocalTimeResolver.nextFiring(of: t("01:30"), days: days, after: first, in: Zones.newYork))
        #expect(next == utc(2026, 11, 2, 6, 30))
    }

    @Test func skippedAlarmStillFires() throws {
        let f = try #require(LocalTimeResolver.nextFiring(of: t("02:30"), days: .sunday, after: utc(2026, 3, 7, 12, 0), in: Zones.newYork))
        #expect(f == utc(2026, 3, 8, 7, 0))
    }

    @Test func nextFiringHonoursTheMask() throws {
        // Thursday 2026-01-15 noon in Berlin; next Mon–Fri 07:00 alarm is Friday.
        let f = try #require(LocalTimeResolver.nextFiring(of: t("07:00"), days: .mondayToFriday, after: utc(2026, 1, 15, 11, 0), in: Zones.berlin))
        #expect(f == utc(2026, 1, 16, 6, 0))
        // Friday noon → Monday.
        let g = try #require(LocalTimeResolver.nextFiring(of: t("07:00"), days: .mondayToFriday, after: utc(2026, 1, 16, 11, 0), in: Zones.berlin))
        #expect(g == utc(2026, 1, 19, 6, 0))
        #expect(LocalTimeResolver.nextFiring(of: t("07:00"), days: [], after: utc(2026, 1, 16, 11, 0), in: Zones.berlin) == nil)
    }

    @Test func powerWindowAcrossSpringForwardIsAnHourShorter() throws {
        let w = PowerWindow(days: .saturday, on: t("22:30"), off: t("07:30"))
        let i = try #require(LocalTimeResolver.interval(of: w, startingOn: date(2026, 3, 7), in: Zones.newYork))
        #expect(i.start == utc(2026, 3, 8, 3, 30))
        #expect(i.end == utc(2026, 3, 8, 11, 30))
        #expect(i.duration == 8 * 3600)
        #expect(LocalTimeResolver.interval(of: w, startingOn: date(2026, 3, 8), in: Zones.newYork) == nil)
    }

    @Test func podInAnotherZoneThanTheHub() {
        // The same HH:mm means different instants in the pod's zone and any other; the resolver
        // only ever uses the zone it is given, never the hub's TimeZone.current.
        let tokyo = LocalTimeResolver.resolve(t("07:00"), on: date(2026, 1, 15), in: Zones.tokyo).fireInstant
        let berlin = LocalTimeResolver.resolve(t("07:00"), on: date(2026, 1, 15), in: Zones.berlin).fireInstant
        #expect(tokyo == utc(2026, 1, 14, 22, 0))
        #expect(berlin == utc(2026, 1, 15, 6, 0))
        #expect(ClockSync(zone: Zones.tokyo, at: tokyo).utcOffsetMinutes == 540)
        #expect(ClockSync(zone: Zones.newYork, at: utc(2026, 7, 1, 0, 0)).utcOffsetMinutes == -240)
    }

    @Test func nextTransition() {
        #expect(LocalTimeResolver.nextTransition(after: utc(2026, 1, 1, 0, 0), in: Zones.newYork) == utc(2026, 3, 8, 7, 0))
        #expect(LocalTimeResolver.nextTransition(after: utc(2026, 1, 1, 0, 0), in: Zones.tokyo) == nil)
    }
}
