import Foundation
import Testing
@testable import SleepSchedule
import SleepDomain

@Suite struct ScheduleInferenceTests {
    /// 28 nights waking 2026-02-02 (Mon) … 2026-03-01 (Sun), "now" just after the last.
    let first = date(2026, 2, 2)
    let now = utc(2026, 3, 1, 18, 0)

    @Test func midnightWrapGivesMidnightBedtime() throws {
        let list = (0..<28).map { i in
            night(first.adding(days: i), bed: i % 2 == 0 ? "23:50" : "00:10", wake: "07:00", zone: Zones.berlin)
        }
        var c = ScheduleInferenceConfiguration()
        c.weekendWakeDays = []  // one group: 14 nights at 23:50, 14 at 00:10
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin, configuration: c)
        #expect(r.weekday.source == .inferred)
        #expect(r.weekday.times.bedtime == t("00:00"))
        #expect(r.weekday.times.wake == t("07:00"))
        let e = try #require(r.weekday.estimate)
        #expect(CircularStatistics.distance(e.bedtime.meanMinute, 0) < 3)
        #expect(e.nightsDropped == 0)
    }

    @Test func weekdaysAndWeekendsSeparately() throws {
        let list = nights(from: first, count: 28, zone: Zones.newYork) { day in
            day == .saturday || day == .sunday ? ("00:30", "09:30") : ("23:00", "07:00")
        }
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.newYork)
        #expect(r.weekday.source == .inferred)
        #expect(r.weekend.source == .inferred)
        #expect(r.weekday.times == SleepTimes(bedtime: t("23:00"), wake: t("07:00")))
        #expect(r.weekend.times == SleepTimes(bedtime: t("00:30"), wake: t("09:30")))
        #expect(r.weekday.estimate?.nightsUsed == 20)
        #expect(r.weekend.estimate?.nightsUsed == 8)
    }

    @Test func nightBelongsToItsWakeDate() throws {
        var c = ScheduleInferenceConfiguration()
        c.minimumNights = 1
        c.minimumNightsPerGroup = 1
        // Friday night: bed Fri 2026-02-27 23:30, wake Sat 2026-02-28 → weekend.
        let friday = night(date(2026, 2, 28), bed: "23:30", wake: "08:45", zone: Zones.berlin)
        // Sunday night: bed Sun 2026-03-01 23:00, wake Mon 2026-03-02 → weekday.
        let sunday = night(date(2026, 3, 2), bed: "22:50", wake: "06:40", zone: Zones.berlin)
        let r = try ScheduleInference.infer(nights: [friday, sunday], now: utc(2026, 3, 2, 12, 0),
                                            timeZone: Zones.berlin, configuration: c)
        #expect(r.weekend.times == SleepTimes(bedtime: t("23:30"), wake: t("08:45")))
        #expect(r.weekday.times == SleepTimes(bedtime: t("22:50"), wake: t("06:40")))
        #expect(r.weekend.estimate?.usedWakeDates == [date(2026, 2, 28)])
        #expect(r.group(forWakeDay: .saturday) == .weekend)
        #expect(r.group(forWakeDay: .monday) == .weekday)
    }

    @Test func groupWithTooFewNightsUsesAllNights() throws {
        // One week: five weekday wakes (Mon–Fri), two weekend wakes.
        let list = nights(from: date(2026, 2, 23), count: 7, zone: Zones.berlin) { day in
            day == .saturday || day == .sunday ? ("23:40", "08:00") : ("23:00", "07:00")
        }
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin)
        #expect(r.weekday.source == .inferred)
        #expect(r.weekend.source == .inferredPooled)
        #expect(r.weekend.estimate?.nightsConsidered == 7)
        #expect(r.weekday.times.wake == t("07:00"))
        // Pooled: between the weekday and weekend means, closer to the weekday.
        let pooledWake = r.weekend.times.wake.minuteOfDay
        #expect(pooledWake > 7 * 60 && pooledWake < 8 * 60)
        #expect(r.weekend.reason.contains("only 2 weekend nights"))
    }

    @Test func outliersAreDroppedAndNamed() throws {
        var list = nights(from: first, count: 12, zone: Zones.berlin) { day in
            (["22:50", "23:00", "23:10"][day.rawValue % 3], "07:00")
        }
        // A party night: in bed at 03:30, up at 10:30.
        let party = date(2026, 2, 14)
        list.append(night(party, bed: "03:30", wake: "10:30", zone: Zones.berlin))
        var c = ScheduleInferenceConfiguration()
        c.weekendWakeDays = []  // an empty weekend mask: every night is a weekday night
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin, configuration: c)
        let e = try #require(r.weekday.estimate)
        #expect(e.droppedWakeDates == [party])
        #expect(r.weekday.times.wake == t("07:00"))
        #expect(CircularStatistics.distance(e.bedtime.meanMinute, 23 * 60) < 5)
        #expect(r.explanation.joined(separator: "\n").contains("dropped as outliers: 2026-02-14"))
    }

    @Test func lateButOrdinaryNightIsNotAnOutlier() throws {
        var list = nights(from: first, count: 10, zone: Zones.berlin) { _ in ("23:00", "07:00") }
        list.append(night(date(2026, 2, 12), bed: "00:15", wake: "07:00", zone: Zones.berlin))
        var c = ScheduleInferenceConfiguration()
        c.weekendWakeDays = []
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin, configuration: c)
        // 75 min late is inside the 90-minute floor even though the other nights are identical.
        #expect(r.weekday.estimate?.nightsDropped == 0)
        #expect(r.weekday.estimate?.nightsUsed == 11)
    }

    @Test func tooFewNightsFallBackToDefault() throws {
        let list = nights(from: date(2026, 2, 26), count: 2, zone: Zones.berlin) { _ in ("01:00", "09:00") }
        var c = ScheduleInferenceConfiguration()
        c.defaultSchedule = ManualSchedule(every: SleepTimes(bedtime: t("22:00"), wake: t("06:30")))
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin, configuration: c)
        #expect(r.weekday.source == .fallbackDefault)
        #expect(r.weekend.source == .fallbackDefault)
        #expect(r.weekday.times == SleepTimes(bedtime: t("22:00"), wake: t("06:30")))
        #expect(r.weekday.reason.contains("need 3"))
        // The same two nights are enough once the minimum is 2.
        c.minimumNights = 2
        c.minimumNightsPerGroup = 2
        let r2 = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin, configuration: c)
        #expect(r2.weekday.source == .inferred)  // both nights wake on Thu/Fri
        #expect(r2.weekend.source == .inferredPooled)
        #expect(r2.weekend.times == SleepTimes(bedtime: t("01:00"), wake: t("09:00")))
    }

    @Test func allIdenticalNights() throws {
        let list = nights(from: first, count: 14, zone: Zones.berlin) { _ in ("22:45", "06:15") }
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin)
        let e = try #require(r.weekday.estimate)
        #expect(r.weekday.times == SleepTimes(bedtime: t("22:45"), wake: t("06:15")))
        #expect(e.bedtime.resultantLength == 1)
        #expect(e.bedtime.circularSDMinutes == 0)
        #expect(e.wake.circularSDMinutes == 0)
        #expect(e.nightsDropped == 0)
    }

    @Test func nightShiftSleeperGoesToBedAtEight() throws {
        let list = nights(from: first, count: 28, zone: Zones.berlin) { day in
            (["07:50", "08:00", "08:10"][day.rawValue % 3], "16:00")
        }
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin)
        let bed = r.weekday.times.bedtime.minuteOfDay
        #expect(abs(bed - 8 * 60) <= 4)
        #expect(r.weekday.times.wake == t("16:00"))
        #expect(r.weekday.times.sleepMinutes > 7 * 60)
        #expect(r.weekday.estimate?.nightsDropped == 0)
    }

    @Test func napsInvalidAndOldSessionsAreSkippedAndCounted() throws {
        var list = nights(from: first, count: 10, zone: Zones.berlin) { _ in ("23:00", "07:00") }
        list.append(night(date(2026, 2, 20), bed: "14:00", wake: "14:40", zone: Zones.berlin, nap: true))
        list.append(SleepNight(startUnix: 2000, endUnix: 1000))               // ends before it starts
        list.append(SleepNight(startUnix: 0, endUnix: 30 * 3600))              // 30 hours
        list.append(night(date(2025, 12, 1), bed: "02:00", wake: "11:00", zone: Zones.berlin)) // too old
        list.append(night(date(2026, 3, 5), bed: "02:00", wake: "11:00", zone: Zones.berlin))  // after now
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin)
        #expect(r.sessionsGiven == 15)
        #expect(r.skippedNaps == 1)
        #expect(r.skippedInvalid == 2)
        #expect(r.skippedOutsideWindow == 2)
        #expect(r.nightsConsidered == 10)
        #expect(r.weekday.times == SleepTimes(bedtime: t("23:00"), wake: t("07:00")))
    }

    @Test func manualScheduleWinsButInferenceIsStillShown() throws {
        let list = nights(from: first, count: 28, zone: Zones.berlin) { _ in ("23:00", "07:00") }
        let manual = ManualSchedule(weekday: SleepTimes(bedtime: t("21:30"), wake: t("05:45")),
                                    weekend: SleepTimes(bedtime: t("23:30"), wake: t("09:00")))
        let r = try ScheduleInference.infer(nights: list, manual: manual, now: now, timeZone: Zones.berlin)
        #expect(r.weekday.source == .manual)
        #expect(r.weekday.times == manual.weekday)
        #expect(r.weekend.times == manual.weekend)
        #expect(r.weekday.estimate?.times == SleepTimes(bedtime: t("23:00"), wake: t("07:00")))
        #expect(r.weekday.reason.contains("inference would give 23:00–07:00"))
        // Cleared: inference again.
        let cleared = try ScheduleInference.infer(nights: list, manual: nil, now: now, timeZone: Zones.berlin)
        #expect(cleared.weekday.source == .inferred)
    }

    @Test func sleepOnsetCanBeTheBedtime() throws {
        let list = (0..<10).map { i in
            night(first.adding(days: i), bed: "22:40", wake: "06:50", zone: Zones.berlin, onset: 20)
        }
        var c = ScheduleInferenceConfiguration()
        #expect(try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin, configuration: c)
            .weekday.times.bedtime == t("22:40"))
        c.bedtimeSource = .sleepOnset
        #expect(try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin, configuration: c)
            .weekday.times.bedtime == t("23:00"))
    }

    @Test func irregularNightsFallBack() throws {
        // Bedtimes spread round the whole clock: no usual time.
        let list = (0..<12).map { i in
            let wakeMinute = (i * 120) % 1440
            return night(first.adding(days: i), bed: TimeOfDay(wrapping: wakeMinute - 480).description,
                         wake: TimeOfDay(wrapping: wakeMinute).description, zone: Zones.berlin)
        }
        var c = ScheduleInferenceConfiguration()
        c.weekendWakeDays = []
        let r = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin, configuration: c)
        #expect(r.weekday.source == .fallbackDefault)
        #expect(r.weekday.reason.contains("irregular"))
    }

    @Test func clockTimesAreReadInThePodsZone() throws {
        // Nights slept in Tokyo at 23:00–07:00. A hub in Berlin must still infer 23:00–07:00
        // when told the pod's zone, and would be 8 hours off if it used its own.
        let list = nights(from: first, count: 28, zone: Zones.tokyo) { _ in ("23:00", "07:00") }
        let inTokyo = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.tokyo)
        #expect(inTokyo.weekday.times == SleepTimes(bedtime: t("23:00"), wake: t("07:00")))
        #expect(inTokyo.timeZoneIdentifier == "Asia/Tokyo")
        let inBerlin = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin)
        #expect(inBerlin.weekday.times == SleepTimes(bedtime: t("15:00"), wake: t("23:00")))
    }

    @Test func localTimesHoldAcrossADSTChange() throws {
        // 23:00–07:00 local every night through Berlin's spring change: still 23:00–07:00.
        let list = nights(from: date(2026, 3, 16), count: 28, zone: Zones.berlin) { _ in ("23:00", "07:00") }
        let r = try ScheduleInference.infer(nights: list, now: utc(2026, 4, 13, 12, 0), timeZone: Zones.berlin)
        #expect(r.weekday.times == SleepTimes(bedtime: t("23:00"), wake: t("07:00")))
        #expect(r.weekday.estimate?.wake.circularSDMinutes == 0)
    }

    @Test func badConfigurationIsAClearError() {
        var c = ScheduleInferenceConfiguration()
        c.minimumNights = 0
        #expect(throws: ScheduleError.self) { try ScheduleInference.infer(nights: [], now: now, timeZone: Zones.utc, configuration: c) }
        c = ScheduleInferenceConfiguration()
        c.weekendWakeDays = .everyDay
        #expect(throws: ScheduleError.self) { try c.validate() }
        c = ScheduleInferenceConfiguration()
        c.minimumRegularity = .nan
        #expect(throws: ScheduleError.self) { try c.validate() }
    }

    @Test func explanationNamesNightsMeansAndSpread() throws {
        let list = nights(from: first, count: 28, zone: Zones.berlin) { _ in ("23:00", "07:00") }
        let text = try ScheduleInference.infer(nights: list, now: now, timeZone: Zones.berlin).explanation.joined(separator: "\n")
        #expect(text.contains("Europe/Berlin"))
        #expect(text.contains("20 of 20 nights used"))
        #expect(text.contains("bedtime mean 23:00 (R 1.0, SD 0 min"))
        #expect(text.contains("weekend nights (wake Sat,Sun): 23:00–07:00 [inferred]"))
    }
}
