import Foundation
import Testing
@testable import SleepSchedule
import SleepDomain

@Suite struct SchedulePushPolicyTests {
    let now = utc(2026, 1, 15, 12, 0)  // Thursday, far from any DST change

    func schedule(_ side: BedSide = .left, alarm: String = "07:00", zone: String = "Europe/Berlin") -> PodSchedule {
        PodSchedule(side: side, timeZoneIdentifier: zone,
                    powerWindows: [PowerWindow(days: .everyDay, on: t("22:30"), off: t("07:30"))],
                    alarms: [AlarmEntry(days: .everyDay, time: t(alarm), intensity: 60, pattern: .rise, durationSeconds: 120)])
    }

    func state(_ zone: TimeZone = Zones.berlin, alarm: String = "07:00") -> DesiredPodState {
        DesiredPodState(timeZone: zone, schedules: [schedule(alarm: alarm, zone: zone.identifier)])
    }

    /// A policy connected and in sync with `state` at `at`.
    func synced(_ s: DesiredPodState, at: Date, _ c: PushPolicyConfiguration = PushPolicyConfiguration()) -> SchedulePushPolicy {
        var p = SchedulePushPolicy(configuration: c)
        _ = p.handle(.desiredChanged(s), now: at)
        let first = p.handle(.connected, now: at)
        let (sent, last) = acknowledgeAll(&p, first, now: at)
        precondition(sent.count == 3 && last.isInSync)
        return p
    }

    @Test func pushesOnlyWhatChanged() {
        var p = SchedulePushPolicy()
        #expect(p.handle(.desiredChanged(state()), now: now).sent.isEmpty, "nothing is sent while disconnected")
        let first = p.handle(.connected, now: now)
        #expect(first.sentKeys == [.clock])
        let (sent, last) = acknowledgeAll(&p, first, now: now)
        #expect(sent.map(\.key) == [.clock, .powerSchedule(.left), .alarm(.left)])
        #expect(sent[0] == .setClock(ClockSync(timeZoneIdentifier: "Europe/Berlin", utcOffsetMinutes: 60)))
        #expect(last.isInSync)
        // The same desired state again: nothing to send, no second in-sync report.
        let same = p.handle(.desiredChanged(state()), now: now.addingTimeInterval(60))
        #expect(same.sent.isEmpty)
        #expect(!same.isInSync)
        #expect(p.handle(.tick, now: now.addingTimeInterval(3600)).sent.isEmpty)
        // Only the alarm changed: only set-alarm goes out.
        let changed = p.handle(.desiredChanged(state(alarm: "06:45")), now: now.addingTimeInterval(7200))
        #expect(changed.sentKeys == [.alarm(.left)])
        guard case .setAlarm(.left, let entry)? = changed.sent.first else { Issue.record("no set-alarm"); return }
        #expect(entry?.time == t("06:45"))
        #expect(p.handle(.acknowledged(.alarm(.left)), now: now.addingTimeInterval(7200)).isInSync)
    }

    /// A stop through the API or MQTT is CLEAR_ALARM, which clears the pod's alarm too: the
    /// alarm goes out again, at once or, when today's firing is still ahead, just after it.
    @Test func anAlarmClearedByAStopIsArmedAgain() {
        var p = synced(state(), at: now)
        let atOnce = p.handle(.alarmCleared(.left, rearmAt: nil), now: now)
        #expect(atOnce.sentKeys == [.alarm(.left)])
        guard case .setAlarm(.left, let entry)? = atOnce.sent.first else { Issue.record("no set-alarm"); return }
        #expect(entry?.time == t("07:00"))
        #expect(p.handle(.acknowledged(.alarm(.left)), now: now).isInSync)

        let later = now.addingTimeInterval(3600)
        let deferred = p.handle(.alarmCleared(.left, rearmAt: later), now: now)
        #expect(deferred.sent.isEmpty && deferred.wakeUp == later)
        #expect(p.handle(.tick, now: later.addingTimeInterval(-1)).sent.isEmpty)
        #expect(p.handle(.tick, now: later).sentKeys == [.alarm(.left)])
    }

    @Test func aClearedAlarmIsArmedAgainAfterTodaysFiringNotBeforeIt() {
        let alarm = AlarmEntry(days: .everyDay, time: t("07:00"), intensity: 60, pattern: .rise, durationSeconds: 120)
        let berlin = Zones.berlin
        // Stopped at 06:47 (a smart wake rang early, or the sleeper is up before it): today's
        // 07:00 must not ring; armed again at 07:01.
        #expect(LocalTimeResolver.rearmInstant(of: alarm, clearedAt: instant(date(2026, 1, 15), "06:47", berlin), in: berlin)
                == instant(date(2026, 1, 15), "07:01", berlin))
        // Stopped while ringing at 07:00, or in the evening: its next firing is tomorrow, so at once.
        #expect(LocalTimeResolver.rearmInstant(of: alarm, clearedAt: instant(date(2026, 1, 15), "07:00", berlin), in: berlin) == nil)
        #expect(LocalTimeResolver.rearmInstant(of: alarm, clearedAt: instant(date(2026, 1, 15), "22:55", berlin), in: berlin) == nil)
        // An alarm on weekdays only, stopped early on a Saturday: it does not fire today anyway.
        let weekdays = AlarmEntry(days: WeekdayMask.everyDay.subtracting(.saturdayAndSunday), time: t("07:00"),
                                  intensity: 60, pattern: .rise, durationSeconds: 120)
        #expect(LocalTimeResolver.rearmInstant(of: weekdays, clearedAt: instant(date(2026, 1, 17), "06:47", berlin), in: berlin) == nil)
    }

    @Test func aPodThatResetsInsideAPowerWindowIsSwitchedOnAgain() {
        // Thursday 23:00 in Berlin: inside the 22:30–07:30 window. Schedules are edge-triggered
        // (§7.4), so after a reset the pod would stay off until tomorrow's 22:30.
        let late = instant(date(2026, 1, 15), "23:00", Zones.berlin)
        var p = synced(state(), at: now)
        let rebooted = p.handle(.podRebooted, now: late)
        let (sent, last) = acknowledgeAll(&p, rebooted, now: late)
        #expect(sent.map(\.key) == [.clock, .powerSchedule(.left), .power(.left), .alarm(.left)])
        #expect(sent.contains(.setPowerOn(.left, level: 100)))
        #expect(last.isInSync)
        // After midnight the window still runs (it crossed midnight); at noon it does not.
        let early = instant(date(2026, 1, 16), "06:00", Zones.berlin)
        #expect(state().commands(at: early, alarmHoldover: 0).contains(.setPowerOn(.left, level: 100)))
        #expect(!state().commands(at: now, alarmHoldover: 0).contains { $0.key == .power(.left) })
        // A window on weekdays only: Saturday night is not inside it.
        let weekdays = PowerWindow(days: .mondayToFriday, on: t("22:30"), off: t("07:30"))
        #expect(weekdays.contains(instant(date(2026, 1, 16), "23:00", Zones.berlin), in: Zones.berlin))  // Friday
        #expect(!weekdays.contains(instant(date(2026, 1, 17), "23:00", Zones.berlin), in: Zones.berlin))  // Saturday
        #expect(weekdays.contains(instant(date(2026, 1, 17), "07:00", Zones.berlin), in: Zones.berlin))  // Friday's, after midnight
        #expect(!weekdays.contains(instant(date(2026, 1, 17), "07:30", Zones.berlin), in: Zones.berlin))
    }

    @Test func aSideTheHubSwitchedOffGetsNoPowerOnFromAPushInsideItsWindow() {
        // Thursday 23:00, inside the window: presence-driven power switched the left side off
        // (an empty bed). A reboot, a replan or a clock re-sync re-sends what the pod lacks, and
        // a power-on there would heat the empty bed again.
        let late = instant(date(2026, 1, 15), "23:00", Zones.berlin)
        var off = state()
        off.switchedOff = [.left]
        #expect(!off.commands(at: late, alarmHoldover: 0).contains { $0.key == .power(.left) })
        var p = synced(off, at: now)
        let rebooted = p.handle(.podRebooted, now: late)
        let (sent, last) = acknowledgeAll(&p, rebooted, now: late)
        #expect(sent.map(\.key) == [.clock, .powerSchedule(.left), .alarm(.left)])
        #expect(last.isInSync)
        // Back in bed: the hub switched it on itself; the desired state says on again.
        #expect(state().commands(at: late, alarmHoldover: 0).contains(.setPowerOn(.left, level: 100)))
    }

    @Test func everyReconnectResendsEverything() {
        var p = synced(state(), at: now)
        #expect(p.handle(.disconnected, now: now.addingTimeInterval(10)).sent.isEmpty)
        #expect(p.handle(.desiredChanged(state(alarm: "06:30")), now: now.addingTimeInterval(20)).sent.isEmpty)
        let again = p.handle(.connected, now: now.addingTimeInterval(30))
        let (sent, last) = acknowledgeAll(&p, again, now: now.addingTimeInterval(30))
        #expect(sent.map(\.key) == [.clock, .powerSchedule(.left), .alarm(.left)])
        #expect(last.isInSync)
    }

    @Test func podRebootResendsEverything() {
        var p = synced(state(), at: now)
        let (sent, _) = acknowledgeAll(&p, p.handle(.podRebooted, now: now), now: now)
        #expect(sent.map(\.key) == [.clock, .powerSchedule(.left), .alarm(.left)])
    }

    @Test func clockEventsResendOnlyTheClock() {
        var p = synced(state(), at: now)
        // The pod says 2010: its clock was reset.
        let reset = p.handle(.podClockReported(utc(2010, 1, 1, 0, 0)), now: now)
        #expect(reset.sentKeys == [.clock])
        _ = p.handle(.acknowledged(.clock), now: now)
        #expect(p.handle(.podClockReported(now.addingTimeInterval(30)), now: now).sent.isEmpty, "30 s off is within tolerance")
        #expect(p.handle(.podClockInvalid, now: now).sentKeys == [.clock])
        _ = p.handle(.acknowledged(.clock), now: now)
        #expect(p.handle(.hubClockChanged, now: now).sentKeys == [.clock])
        let acked = p.handle(.acknowledged(.clock), now: now)
        #expect(acked.isInSync)
        // Re-synced every 6 hours.
        #expect(acked.wakeUp == now.addingTimeInterval(6 * 3600))
        #expect(p.handle(.tick, now: now.addingTimeInterval(6 * 3600)).sentKeys == [.clock])
    }

    @Test func aroundADSTChange() throws {
        let transition = utc(2026, 3, 8, 7, 0)  // New York springs forward
        let start = transition.addingTimeInterval(-3600)
        var p = SchedulePushPolicy()
        _ = p.handle(.desiredChanged(state(Zones.newYork)), now: start)
        let (sent, last) = acknowledgeAll(&p, p.handle(.connected, now: start), now: start)
        #expect(sent.first == .setClock(ClockSync(timeZoneIdentifier: "America/New_York", utcOffsetMinutes: -300)))
        let prePush = try #require(last.wakeUp)
        #expect(prePush == transition.addingTimeInterval(-15 * 60))
        // Nothing happens before the window.
        #expect(p.handle(.tick, now: prePush.addingTimeInterval(-60)).sent.isEmpty)
        // In the window: schedules and alarm again, not the clock.
        let (again, afterPrePush) = acknowledgeAll(&p, p.handle(.tick, now: prePush), now: prePush)
        #expect(again.map(\.key) == [.powerSchedule(.left), .alarm(.left)])
        #expect(afterPrePush.wakeUp == transition)
        // Once per transition only.
        #expect(p.handle(.tick, now: prePush.addingTimeInterval(300)).sent.isEmpty)
        // At the transition: the clock with the new offset.
        let atChange = p.handle(.tick, now: transition)
        #expect(atChange.sent == [.setClock(ClockSync(timeZoneIdentifier: "America/New_York", utcOffsetMinutes: -240))])
        #expect(p.handle(.acknowledged(.clock), now: transition).isInSync)
    }

    @Test func retryableNackIsRetriedWithBackoffThenReported() throws {
        var p = SchedulePushPolicy()
        _ = p.handle(.desiredChanged(state()), now: now)
        #expect(p.handle(.connected, now: now).sent.first?.key == .clock)
        // BUSY: the clock waits; the schedules go out meanwhile.
        var clock = now
        let (others, afterOthers) = acknowledgeAll(&p, p.handle(.rejected(.clock, status: 4), now: clock), now: clock)
        #expect(others.map(\.key) == [.powerSchedule(.left), .alarm(.left)])
        #expect(!afterOthers.isInSync)
        var retryAt = try #require(afterOthers.wakeUp)
        var attempts: [Int] = []
        var delays: [Double] = []
        var failures: [(ScheduleCommand, PushFailureReason, Int)] = []
        for _ in 0..<5 {
            delays.append(retryAt.timeIntervalSince(clock))
            clock = retryAt
            let a = p.handle(.tick, now: clock)
            guard case .send(let cmd, let attempt)? = a.first(where: { if case .send = $0 { true } else { false } }) else { break }
            #expect(cmd.key == .clock)
            attempts.append(attempt)
            let r = p.handle(.rejected(.clock, status: 4), now: clock)
            failures += r.failures
            guard let next = r.wakeUp, r.failures.isEmpty else { break }
            retryAt = next
        }
        #expect(attempts == [2, 3, 4])
        #expect(delays == [5, 10, 20])
        #expect(failures.count == 1)
        #expect(failures.first?.1 == .rejected(status: 4))
        #expect(failures.first?.2 == 4)
        // Given up: no more sends on later ticks…
        #expect(p.handle(.tick, now: clock.addingTimeInterval(600)).sent.isEmpty)
        // …until something changes.
        #expect(p.handle(.hubClockChanged, now: clock.addingTimeInterval(700)).sent == [.setClock(ClockSync(zone: Zones.berlin, at: now))])
    }

    @Test func finalNackIsReportedAtOnceAndNotLooped() {
        var p = SchedulePushPolicy()
        _ = p.handle(.desiredChanged(state()), now: now)
        _ = p.handle(.connected, now: now)
        _ = p.handle(.acknowledged(.clock), now: now)
        let bad = p.handle(.rejected(.powerSchedule(.left), status: 3), now: now)  // BAD_VALUE
        #expect(bad.failures.count == 1)
        #expect(bad.failures.first?.2 == 1)
        #expect(bad.sentKeys == [.alarm(.left)])
        let done = p.handle(.acknowledged(.alarm(.left)), now: now)
        #expect(!done.isInSync)
        #expect(p.handle(.tick, now: now.addingTimeInterval(3600)).sent.isEmpty)
        // A new desired power schedule is tried again.
        var changed = state()
        changed.schedules[0].powerWindows[0].on = t("22:00")
        #expect(p.handle(.desiredChanged(changed), now: now.addingTimeInterval(4000)).sentKeys == [.powerSchedule(.left)])
    }

    /// v1's NOT_READY and v1.1's CLOCK_NOT_SET (which a v1.1 pod answers instead: it was taken
    /// for a final refusal, so a pod that lost its clock kept refusing every schedule).
    @Test(arguments: [5, 10]) func clockNotValidResendsTheClockFirstThenTheRefusedCommand(_ status: Int) {
        var p = SchedulePushPolicy()
        _ = p.handle(.desiredChanged(state()), now: now)
        _ = p.handle(.connected, now: now)
        _ = p.handle(.acknowledged(.clock), now: now)
        let r = p.handle(.rejected(.powerSchedule(.left), status: status), now: now)
        #expect(r.sentKeys == [.clock])
        #expect(r.failures.isEmpty)
        _ = p.handle(.acknowledged(.clock), now: now)
        // The refused schedule goes out again once its retry is due, not given up.
        var later = now
        var sent: [ScheduleCommandKey] = []
        for _ in 0..<20 where !sent.contains(.powerSchedule(.left)) {
            later = later.addingTimeInterval(5)
            let step = p.handle(.tick, now: later)
            sent += step.sentKeys
            for key in step.sentKeys { _ = p.handle(.acknowledged(key), now: later) }
        }
        #expect(sent.contains(.powerSchedule(.left)), "sent \(sent)")
    }

    @Test func unansweredCommandTimesOutAndIsRetried() throws {
        var p = SchedulePushPolicy()
        _ = p.handle(.desiredChanged(state()), now: now)
        let first = p.handle(.connected, now: now)
        let deadline = try #require(first.wakeUp)
        #expect(deadline == now.addingTimeInterval(10))
        #expect(p.handle(.tick, now: now.addingTimeInterval(5)).sent.isEmpty)
        // No answer by the deadline: the next command goes out, the clock retries later.
        let timedOut = p.handle(.tick, now: deadline)
        #expect(timedOut.sentKeys == [.powerSchedule(.left)])
        // The driver may also report the timeout itself.
        let explicit = p.handle(.timedOut(.powerSchedule(.left)), now: deadline)
        #expect(explicit.sentKeys == [.alarm(.left)])
        _ = p.handle(.acknowledged(.alarm(.left)), now: deadline)
        let retry = p.handle(.tick, now: deadline.addingTimeInterval(5))
        #expect(retry.contains(.send(.setClock(ClockSync(zone: Zones.berlin, at: now)), attempt: 2)))
    }

    @Test func staleAnswersAreIgnored() {
        var p = SchedulePushPolicy()
        _ = p.handle(.desiredChanged(state()), now: now)
        _ = p.handle(.connected, now: now)  // clock in flight
        #expect(p.handle(.acknowledged(.alarm(.left)), now: now).sent.isEmpty)
        #expect(p.inFlight?.key == .clock)
        #expect(p.acknowledged.isEmpty)
        #expect(p.handle(.rejected(.powerSchedule(.left), status: 3), now: now).failures.isEmpty)
        #expect(p.inFlight?.key == .clock)
    }

    @Test func zoneChangeResendsEverythingWithTheNewOffset() {
        var p = synced(state(), at: now)
        let moved = p.handle(.desiredChanged(state(Zones.tokyo)), now: now)
        let (sent, _) = acknowledgeAll(&p, moved, now: now)
        #expect(sent.map(\.key) == [.clock, .powerSchedule(.left), .alarm(.left)])
        #expect(sent.first == .setClock(ClockSync(timeZoneIdentifier: "Asia/Tokyo", utcOffsetMinutes: 540)))
    }

    @Test func oneAlarmPerSideFollowsTheNextWake() throws {
        // Weekday alarm 07:00 (Mon–Fri), weekend 09:30 (Sat, Sun); Friday 06:00 in Berlin.
        var s = schedule()
        s.alarms = [AlarmEntry(days: .mondayToFriday, time: t("07:00"), intensity: 60, pattern: .rise, durationSeconds: 120),
                    AlarmEntry(days: .saturdayAndSunday, time: t("09:30"), intensity: 60, pattern: .rise, durationSeconds: 120)]
        let desired = DesiredPodState(timeZone: Zones.berlin, schedules: [s])
        let friday = utc(2026, 1, 16, 5, 0)
        var p = SchedulePushPolicy()
        _ = p.handle(.desiredChanged(desired), now: friday)
        let (sent, last) = acknowledgeAll(&p, p.handle(.connected, now: friday), now: friday)
        #expect(sent.last == .setAlarm(.left, s.alarms[0]))
        // The weekday alarm stays in force for 2 h after it fires at 07:00 local (06:00 UTC).
        let switchAt = try #require(last.wakeUp)
        #expect(switchAt == utc(2026, 1, 16, 8, 0))
        #expect(p.handle(.tick, now: switchAt.addingTimeInterval(-60)).sent.isEmpty)
        #expect(p.handle(.tick, now: switchAt).sent == [.setAlarm(.left, s.alarms[1])])
    }

    @Test func disabledAlarmIsACLear() {
        var s = schedule()
        s.alarms = []
        var p = SchedulePushPolicy()
        _ = p.handle(.desiredChanged(DesiredPodState(timeZone: Zones.berlin, schedules: [s])), now: now)
        let (sent, _) = acknowledgeAll(&p, p.handle(.connected, now: now), now: now)
        #expect(sent.last == .setAlarm(.left, nil))
    }
}
