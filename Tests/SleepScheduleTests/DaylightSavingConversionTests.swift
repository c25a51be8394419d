import Foundation
import Testing
@testable import SleepSchedule
import SleepDomain

/// The hub's DST rule (firmware-protocol.md §7.4, decided 2026-12-07): around a transition the
/// times the pod holds are sent converted, so the pod never meets a time the transition skips
/// or repeats, for alarms on every day and on one day alike.
@Suite struct DaylightSavingConversionTests {
    static let lead: TimeInterval = 15 * 60
    /// New York: 2026-03-08 07:00 UTC (02:00 EST → 03:00 EDT); 2026-11-01 06:00 UTC (02:00 EDT → 01:00 EST).
    static let spring = utc(2026, 3, 8, 7, 0)
    static let fall = utc(2026, 11, 1, 6, 0)

    func alarm(_ time: String, _ days: WeekdayMask = .everyDay) -> AlarmEntry {
        AlarmEntry(days: days, time: t(time), intensity: 60, pattern: .rise, durationSeconds: 60)
    }

    func sent(_ entry: AlarmEntry, at now: Date) -> AlarmEntry? {
        DaylightSavingConversion.alarm(entry, at: now, in: Zones.newYork, lead: Self.lead)
    }

    @Test func theWindowRunsFromThePrePushUntilTheJumpedHourIsOver() throws {
        let w = try #require(TransitionWindow.around(Self.spring, in: Zones.newYork, lead: Self.lead))
        #expect(w.transition == Self.spring && w.jumpMinutes == 60 && w.localMinute == 120 && w.day == date(2026, 3, 8))
        #expect(w.affectedMinutes == 120..<180)
        #expect(w.start == Self.spring - Self.lead && w.end == Self.spring + 3600)
        #expect(TransitionWindow.around(Self.spring - Self.lead - 1, in: Zones.newYork, lead: Self.lead) == nil)
        #expect(TransitionWindow.around(Self.spring + 3600, in: Zones.newYork, lead: Self.lead) == nil)
        let f = try #require(TransitionWindow.around(Self.fall, in: Zones.newYork, lead: Self.lead))
        #expect(f.jumpMinutes == -60 && f.affectedMinutes == 60..<120 && f.day == date(2026, 11, 1))
        #expect(TransitionWindow.around(utc(2026, 6, 1, 6, 0), in: Zones.newYork, lead: Self.lead) == nil)
        #expect(TransitionWindow.around(Self.spring, in: Zones.tokyo, lead: Self.lead) == nil)
    }

    @Test func aSkippedTimeIsSentAsTheFirstMinuteAfterTheJumpUntilTheHourIsOver() {
        for days in [WeekdayMask.everyDay, .sunday] {  // repeating, and for one day
            let entry = alarm("02:30", days)
            #expect(sent(entry, at: Self.spring - Self.lead - 60) == entry)
            #expect(sent(entry, at: Self.spring - Self.lead)?.time == t("03:00"))
            #expect(sent(entry, at: Self.spring)?.time == t("03:00"))
            #expect(sent(entry, at: Self.spring)?.days == days)
            #expect(sent(entry, at: Self.spring + 3599)?.time == t("03:00"))
            #expect(sent(entry, at: Self.spring + 3600) == entry)
        }
        // Not on the transition day, or not in the skipped hour: as it is.
        #expect(sent(alarm("02:30", .mondayToFriday), at: Self.spring) == alarm("02:30", .mondayToFriday))
        #expect(sent(alarm("01:59"), at: Self.spring) == alarm("01:59"))
        #expect(sent(alarm("03:00"), at: Self.spring) == alarm("03:00"))
    }

    @Test func aRepeatedTimeLosesTheTransitionDayFromTheTransitionUntilTheHourIsOver() {
        let entry = alarm("01:30")
        #expect(sent(entry, at: Self.fall - Self.lead) == entry, "its first occurrence, before the transition, fires")
        #expect(sent(entry, at: Self.fall)?.days == WeekdayMask.everyDay.subtracting(.sunday))
        #expect(sent(entry, at: Self.fall)?.time == t("01:30"))
        #expect(sent(entry, at: Self.fall + 3600) == entry)
        // For one day (Sunday only): cleared for the repeated hour.
        #expect(sent(alarm("01:30", .sunday), at: Self.fall - 1) == alarm("01:30", .sunday))
        #expect(sent(alarm("01:30", .sunday), at: Self.fall) == nil)
        #expect(sent(alarm("02:00"), at: Self.fall) == alarm("02:00"))
        #expect(sent(alarm("00:59"), at: Self.fall) == alarm("00:59"))
    }

    /// The pod's clock, as the hub sets it (old offset before the transition, new after), is
    /// stepped minute by minute through each transition night; at every minute it holds what
    /// the hub sends then. Every alarm time of the night rings exactly once, on both
    /// transitions, repeating or for one day, and no skipped time is ever held in the window.
    @Test(arguments: [DaylightSavingConversionTests.spring, DaylightSavingConversionTests.fall])
    func everyTimeOfTheNightRingsOnceAndNoSkippedTimeIsHeld(transition: Date) {
        let zone = Zones.newYork
        let window = TransitionWindow.around(transition, in: zone, lead: Self.lead)!
        for days in [WeekdayMask.everyDay, .sunday] {
            for minute in stride(from: 0, to: 4 * 60, by: 5) {
                let entry = alarm(TimeOfDay(wrapping: minute).description, days)
                var rings = 0
                var m = transition.addingTimeInterval(-3 * 3600)
                while m < transition.addingTimeInterval(3 * 3600) {
                    let held = sent(entry, at: m)
                    let local = LocalDateTime(m, in: zone)
                    if let held, held.days.contains(local.date.weekday), held.time == local.timeOfDay { rings += 1 }
                    if window.jumpMinutes > 0, m >= window.start, m < window.end, let held,
                       held.days.contains(window.day.weekday) {
                        #expect(!window.affectedMinutes.contains(held.time.minuteOfDay), "held a skipped \(held.time) at \(m)")
                    }
                    m = m.addingTimeInterval(60)
                }
                #expect(rings == 1, "\(entry) rang \(rings) times around \(transition)")
            }
        }
    }

    @Test func aPowerSwitchInTheSkippedHourMovesOutOfItAndOnlyOnThatDay() {
        let window = PowerWindow(days: .saturday, on: t("23:00"), off: t("02:30"))  // crosses into Sunday
        let sentWindow = DaylightSavingConversion.powerWindow(window, at: Self.spring, in: Zones.newYork, lead: Self.lead)
        #expect(sentWindow.on == t("23:00") && sentWindow.off == t("03:00"))
        let onAt = PowerWindow(days: .sunday, on: t("02:15"), off: t("07:00"))
        #expect(DaylightSavingConversion.powerWindow(onAt, at: Self.spring, in: Zones.newYork, lead: Self.lead).on == t("03:00"))
        let friday = PowerWindow(days: .friday, on: t("23:00"), off: t("02:30"))  // its off is on Saturday
        #expect(DaylightSavingConversion.powerWindow(friday, at: Self.spring, in: Zones.newYork, lead: Self.lead) == friday)
        #expect(DaylightSavingConversion.powerWindow(window, at: Self.fall, in: Zones.newYork, lead: Self.lead) == window)
        #expect(DaylightSavingConversion.powerWindow(window, at: Self.spring + 3600, in: Zones.newYork, lead: Self.lead) == window)
    }

    /// The push policy sends the converted alarm at the pre-push, and the original once the
    /// hour is over, waking itself at both ends.
    @Test func thePolicyPushesTheConvertedAlarmAndTheOriginalAfter() {
        var schedule = PodSchedule(side: .left, timeZoneIdentifier: "America/New_York", powerWindows: [], alarms: [alarm("02:30")])
        schedule.powerWindows = [PowerWindow(days: .everyDay, on: t("22:00"), off: t("07:00"))]
        let state = DesiredPodState(timeZone: Zones.newYork, schedules: [schedule])
        var policy = SchedulePushPolicy()
        var wakes: [Date] = []
        func alarms(_ actions: [PushAction], _ now: Date) -> [AlarmEntry?] {
            var out: [AlarmEntry?] = []
            var queue = actions
            while let a = queue.first {
                queue.removeFirst()
                if case .wakeUp(let at) = a { wakes.append(at) }
                if case .send(let cmd, _) = a {
                    if case .setAlarm(_, let e) = cmd { out.append(e) }
                    queue += policy.handle(.acknowledged(cmd.key), now: now)
                }
            }
            return out
        }
        let early = Self.spring - 3600
        _ = alarms(policy.handle(.desiredChanged(state), now: early), early)
        #expect(alarms(policy.handle(.connected, now: early), early) == [alarm("02:30")])
        let pre = Self.spring - Self.lead
        #expect(alarms(policy.handle(.tick, now: pre), pre) == [alarm("03:00")])
        wakes = []
        #expect(alarms(policy.handle(.tick, now: Self.spring), Self.spring) == [], "03:00 stays until the hour is over")
        #expect(wakes.last == Self.spring + 3600, "the policy wakes itself when the hour is over: \(wakes)")
        let after = Self.spring + 3600
        #expect(alarms(policy.handle(.tick, now: after), after) == [alarm("02:30")])
    }
}
