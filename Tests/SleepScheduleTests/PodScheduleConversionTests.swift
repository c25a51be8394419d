import Foundation
import Testing
@testable import SleepSchedule
import SleepDomain

@Suite struct PodScheduleConversionTests {
    func convert(_ weekday: SleepTimes, _ weekend: SleepTimes? = nil,
                 _ configure: (inout PodScheduleConfiguration) -> Void = { _ in }) throws -> PodSchedule {
        var c = PodScheduleConfiguration()
        configure(&c)
        return try PodScheduleConverter.convert(ManualSchedule(weekday: weekday, weekend: weekend ?? weekday),
                                                side: .left, timeZoneIdentifier: "Europe/Berlin", configuration: c)
    }

    @Test func sameTimesEveryNightGiveOneWindowCrossingMidnight() throws {
        let s = try convert(SleepTimes(bedtime: t("23:00"), wake: t("07:00")))
        #expect(s.powerWindows == [PowerWindow(days: .everyDay, on: t("22:30"), off: t("07:30"), level: 100)])
        #expect(s.powerWindows[0].crossesMidnight)
        #expect(s.powerWindows[0].durationMinutes == 9 * 60)
        #expect(s.alarms == [AlarmEntry(days: .everyDay, time: t("07:00"), intensity: 60, pattern: .rise, durationSeconds: 120)])
        #expect(s.timeZoneIdentifier == "Europe/Berlin")
    }

    /// 07:00–07:00 is neither no night nor a whole day: refused, not pushed as 06:30→07:30.
    @Test func aBedtimeEqualToTheWakeIsRefused() throws {
        #expect(throws: ScheduleError.bedtimeIsWake(t("07:00"))) {
            try convert(SleepTimes(bedtime: t("07:00"), wake: t("07:00")))
        }
        #expect(throws: ScheduleError.bedtimeIsWake(t("23:30"))) {
            try convert(SleepTimes(bedtime: t("23:00"), wake: t("07:00")), SleepTimes(bedtime: t("23:30"), wake: t("23:30")))
        }
        #expect(ScheduleError.bedtimeIsWake(t("07:00")).description
                == "bedtime and wake are both 07:00: a night needs a wake time after its bedtime")
    }

    @Test func roundingIsDownForOnUpForOffNearestForAlarm() throws {
        let times = SleepTimes(bedtime: t("23:07"), wake: t("06:58"))
        let s5 = try convert(times)
        #expect(s5.powerWindows[0].on == t("22:35"))   // 22:37 down
        #expect(s5.powerWindows[0].off == t("07:30"))  // 07:28 up
        #expect(s5.alarms[0].time == t("07:00"))       // 06:58 nearest
        let s15 = try convert(times) { $0.roundingStepMinutes = 15 }
        #expect(s15.powerWindows[0].on == t("22:30"))
        #expect(s15.powerWindows[0].off == t("07:30"))
        #expect(s15.alarms[0].time == t("07:00"))
        let s1 = try convert(times) { $0.roundingStepMinutes = 1 }
        #expect(s1.powerWindows[0].on == t("22:37"))
        #expect(s1.alarms[0].time == t("06:58"))
    }

    @Test func leadAndDelayAreConfigurable() throws {
        let s = try convert(SleepTimes(bedtime: t("22:00"), wake: t("06:00"))) {
            $0.warmUpLeadMinutes = 60
            $0.powerOffDelayMinutes = 0
            $0.powerLevel = 40
        }
        #expect(s.powerWindows == [PowerWindow(days: .everyDay, on: t("21:00"), off: t("06:00"), level: 40)])
    }

    @Test func weekendPowerOnFiresTheEveningBefore() throws {
        let s = try convert(SleepTimes(bedtime: t("23:00"), wake: t("07:00")),
                            SleepTimes(bedtime: t("23:45"), wake: t("09:30")))
        // Weekday nights wake Mon–Fri, so they switch on Sun–Thu; weekend nights (wake Sat, Sun)
        // switch on Fri and Sat.
        #expect(s.powerWindows.count == 2)
        let weekday = try #require(s.powerWindows.first { $0.on == t("22:30") })
        let weekend = try #require(s.powerWindows.first { $0.on == t("23:15") })
        #expect(weekday.days == [.sunday, .monday, .tuesday, .wednesday, .thursday])
        #expect(weekday.days.rawValue == 0x4F)
        #expect(weekend.days == [.friday, .saturday])
        #expect(weekend.off == t("10:00"))
        #expect(s.alarms.first { $0.time == t("07:00") }?.days == .mondayToFriday)
        #expect(s.alarms.first { $0.time == t("09:30") }?.days == .saturdayAndSunday)
    }

    @Test func groupsOnBothSidesOfMidnightNeverShareAPowerDay() throws {
        // Weekdays switch on 22:30 the evening before; weekends would switch on at 00:30 on the
        // wake day. The pod keeps one entry per weekday, so the weekend moves to 23:55 the evening
        // before: masks stay disjoint and cover the week.
        let s = try convert(SleepTimes(bedtime: t("23:00"), wake: t("07:00")),
                            SleepTimes(bedtime: t("01:00"), wake: t("09:30")))
        #expect(s.powerWindows.count == 2)
        let union = s.powerWindows.reduce(WeekdayMask()) { $0.union($1.days) }
        #expect(union == .everyDay)
        #expect(s.powerWindows[0].days.intersection(s.powerWindows[1].days).isEmpty)
        let weekend = try #require(s.powerWindows.first { $0.days == [.friday, .saturday] })
        #expect(weekend.on == t("23:55"))
        #expect(weekend.off == t("10:00"))
    }

    @Test func allAfterMidnightKeepsTheWakeDay() throws {
        let s = try convert(SleepTimes(bedtime: t("01:30"), wake: t("09:00")))
        #expect(s.powerWindows == [PowerWindow(days: .everyDay, on: t("01:00"), off: t("09:30"), level: 100)])
        #expect(!s.powerWindows[0].crossesMidnight)
    }

    @Test func nightShiftSleeper() throws {
        var c = PodScheduleConfiguration()
        c.alarm = AlarmPreferences(enabled: true, intensity: 80, pattern: .double, durationSeconds: 300)
        let s = try PodScheduleConverter.convert(
            ManualSchedule(every: SleepTimes(bedtime: t("08:00"), wake: t("16:00"))),
            side: .right, timeZoneIdentifier: "UTC", configuration: c)
        #expect(s.side == .right)
        #expect(s.powerWindows == [PowerWindow(days: .everyDay, on: t("07:30"), off: t("16:30"))])
        #expect(s.alarms == [AlarmEntry(days: .everyDay, time: t("16:00"), intensity: 80, pattern: .double, durationSeconds: 300)])
    }

    @Test func alarmRoundedPastMidnightMovesToTheNextDay() throws {
        let s = try convert(SleepTimes(bedtime: t("16:00"), wake: t("23:58")),
                            SleepTimes(bedtime: t("01:00"), wake: t("09:00")))
        // Weekday wakes Mon–Fri at 23:58 → alarm 00:00 on Tue–Sat.
        let weekday = try #require(s.alarms.first { $0.days.contains(.tuesday) })
        #expect(weekday.time == t("00:00"))
        #expect(weekday.days == [.tuesday, .wednesday, .thursday, .friday, .saturday])
        #expect(s.alarms.first { $0.time == t("09:00") }?.days == .saturdayAndSunday)
    }

    @Test func equalGroupsMergeIntoOneEntry() throws {
        let s = try convert(SleepTimes(bedtime: t("16:00"), wake: t("23:58")))
        #expect(s.alarms.count == 1)
        #expect(s.alarms[0].days == .everyDay)
        #expect(s.alarms[0].time == t("00:00"))
        #expect(s.powerWindows.count == 1)
    }

    @Test func alarmDisabledGivesNoAlarm() throws {
        let s = try convert(SleepTimes(bedtime: t("23:00"), wake: t("07:00"))) { $0.alarm.enabled = false }
        #expect(s.alarms.isEmpty)
        #expect(s.powerWindows.count == 1)
    }

    @Test func badValuesAreClearErrors() {
        let times = SleepTimes(bedtime: t("23:00"), wake: t("07:00"))
        #expect(throws: ScheduleError.self) { try convert(times) { $0.roundingStepMinutes = 7 } }
        #expect(throws: ScheduleError.self) { try convert(times) { $0.alarm.intensity = 101 } }
        #expect(throws: ScheduleError.self) { try convert(times) { $0.alarm.durationSeconds = 0 } }
        #expect(throws: ScheduleError.self) { try convert(times) { $0.warmUpLeadMinutes = -5 } }
        // 23:00 → 22:00 is 23 h of sleep; with a 30-min lead and 30-min delay that is a whole day.
        #expect(throws: ScheduleError.powerWindowTooLong(sleepMinutes: 1380, leadMinutes: 30, delayMinutes: 30)) {
            try convert(SleepTimes(bedtime: t("23:00"), wake: t("22:00")))
        }
        // Said from the night the user gave, not only the settings they never touched.
        #expect(ScheduleError.powerWindowTooLong(sleepMinutes: 1435, leadMinutes: 30, delayMinutes: 30).description
                == "a night of 23 h 55 min from bedtime to wake, with the 30-min warm-up before it and the 30-min off delay after "
                + "it, keeps the power on for 24 h 55 min, a day or longer: give a shorter night (or shorten "
                + "schedule.conversion.warmUpLeadMinutes or powerOffDelayMinutes)")
        // 23.5 h in bed, rounded out to whole hours: on 07:00, off 07:00.
        #expect(throws: ScheduleError.emptyPowerWindow(t("07:00"))) {
            try convert(SleepTimes(bedtime: t("07:30"), wake: t("07:00"))) {
                $0.warmUpLeadMinutes = 0
                $0.powerOffDelayMinutes = 0
                $0.roundingStepMinutes = 60
            }
        }
    }

    @Test func inferenceResultConvertsInThePodsZone() throws {
        let list = nights(from: date(2026, 2, 2), count: 28, zone: Zones.tokyo) { _ in ("23:00", "07:00") }
        let r = try ScheduleInference.infer(nights: list, now: utc(2026, 3, 1, 18, 0), timeZone: Zones.tokyo)
        let s = try PodScheduleConverter.convert(r, side: .left)
        #expect(s.timeZoneIdentifier == "Asia/Tokyo")
        #expect(s.powerWindows.map(\.on) == [t("22:30")])
        #expect(s.alarms.map(\.time) == [t("07:00")])
    }
}
