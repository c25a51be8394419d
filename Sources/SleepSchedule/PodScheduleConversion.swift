import SleepDomain

/// How bedtime and wake become the pod's power windows and alarm.
package struct PodScheduleConfiguration: Hashable, Sendable, Codable {
    /// Power on this long before bedtime so the bed is warm (0…720 min).
    package var warmUpLeadMinutes: Int = 30
    /// Power off this long after the wake time (0…720 min).
    package var powerOffDelayMinutes: Int = 30
    /// Times snap to multiples of this many minutes; must divide 1440 (1, 5, 10, 15, 30, 60 …).
    package var roundingStepMinutes: Int = 5
    /// Power stage level of every window, 0…100 %.
    package var powerLevel: Int = 100
    package var alarm = AlarmPreferences()

    package init() {}

    package func validate() throws(ScheduleError) {
        guard (0...720).contains(warmUpLeadMinutes) else {
            throw .invalidConfiguration("warmUpLeadMinutes must be in 0…720, is \(warmUpLeadMinutes)")
        }
        guard (0...720).contains(powerOffDelayMinutes) else {
            throw .invalidConfiguration("powerOffDelayMinutes must be in 0…720, is \(powerOffDelayMinutes)")
        }
        guard (1...720).contains(roundingStepMinutes), TimeOfDay.minutesPerDay % roundingStepMinutes == 0 else {
            throw .invalidConfiguration("roundingStepMinutes must divide 1440 (1, 5, 10, 15, 30, 60…), is \(roundingStepMinutes)")
        }
        guard (0...100).contains(powerLevel) else {
            throw .invalidConfiguration("powerLevel must be in 0…100, is \(powerLevel)")
        }
        guard (0...100).contains(alarm.intensity) else {
            throw .invalidConfiguration("alarm intensity must be in 0…100, is \(alarm.intensity)")
        }
        guard (1...3600).contains(alarm.durationSeconds) else {
            throw .invalidConfiguration("alarm duration must be in 1…3600 s, is \(alarm.durationSeconds)")
        }
    }
}

/// Turns bedtime/wake per group into the pod's schedule for one side.
///
/// Per group (weekday / weekend nights, by wake day):
/// - power-on = bedtime − lead, rounded DOWN to the step (the warm-up is never shorter than asked);
/// - power-off = wake + delay, rounded UP to the step (never off before the delay is over);
/// - alarm = wake, rounded to the NEAREST step (ties later);
/// - the alarm's mask is the group's wake days; the power window's mask is the wake days moved to
///   the local date on which the power-on falls (a 22:30 power-on for Saturday's wake fires on
///   Friday), found by walking back from the wake through the sleep duration and the lead;
/// - if one group's power-on is before midnight and the other's after, the later one starts at
///   the last step before midnight (23:55), so no weekday holds two power entries;
/// - groups with identical times merge into one entry with the union of their days.
package enum PodScheduleConverter {
    package static func convert(
        _ schedule: ManualSchedule,
        weekendWakeDays: WeekdayMask = .saturdayAndSunday,
        side: BedSide,
        timeZoneIdentifier: String,
        configuration: PodScheduleConfiguration = PodScheduleConfiguration()
    ) throws(ScheduleError) -> PodSchedule {
        try configuration.validate()
        let groups: [(WeekdayMask, SleepTimes)] = [
            (WeekdayMask.everyDay.subtracting(weekendWakeDays), schedule.weekday),
            (weekendWakeDays, schedule.weekend),
        ].filter { !$0.0.isEmpty }
        var plans: [NightPlan] = []
        for (wakeDays, times) in groups {
            guard times.sleepMinutes > 0 else { throw .bedtimeIsWake(times.bedtime) }
            plans.append(try plan(times, wakeDays: wakeDays, configuration))
        }
        // The pod keeps one power entry per weekday. If one group's power-on falls before midnight
        // (on the evening before the wake) and the other's after, their masks would share a day
        // and leave another empty; so the after-midnight group starts at the last step before
        // midnight instead (a longer warm-up, never a shorter one).
        if plans.contains(where: { $0.onDay < 0 }) {
            let lastStep = -configuration.roundingStepMinutes
            for i in plans.indices where plans[i].onDay >= 0 {
                plans[i].onAbs = lastStep
                plans[i].onDay = -1
            }
        }
        var windows: [PowerWindow] = []
        var alarms: [AlarmEntry] = []
        for p in plans {
            let on = TimeOfDay(wrapping: p.onAbs), off = TimeOfDay(wrapping: p.offAbs)
            guard on != off else { throw .emptyPowerWindow(on) }
            windows.append(PowerWindow(days: p.wakeDays.shifted(byDays: p.onDay), on: on, off: off,
                                       level: configuration.powerLevel))
            if let alarm = p.alarm { alarms.append(alarm) }
        }
        return PodSchedule(side: side, timeZoneIdentifier: timeZoneIdentifier,
                           powerWindows: mergeWindows(windows), alarms: mergeAlarms(alarms))
    }

    /// Convenience: the times in force of an inference result.
    package static func convert(
        _ result: ScheduleInferenceResult,
        side: BedSide,
        configuration: PodScheduleConfiguration = PodScheduleConfiguration()
    ) throws(ScheduleError) -> PodSchedule {
        try convert(result.schedule, weekendWakeDays: result.weekendWakeDays, side: side,
                    timeZoneIdentifier: result.timeZoneIdentifier, configuration: configuration)
    }

    /// One group's night, minutes counted from local midnight of the WAKE date (negative = the
    /// evening before).
    struct NightPlan {
        var wakeDays: WeekdayMask
        var onAbs: Int
        var onDay: Int
        var offAbs: Int
        var alarm: AlarmEntry?
    }

    static func plan(_ times: SleepTimes, wakeDays: WeekdayMask, _ c: PodScheduleConfiguration)
        throws(ScheduleError) -> NightPlan {
        let step = c.roundingStepMinutes
        let wake = times.wake.minuteOfDay
        let window = times.sleepMinutes + c.warmUpLeadMinutes + c.powerOffDelayMinutes
        guard window < TimeOfDay.minutesPerDay else {
            throw .powerWindowTooLong(sleepMinutes: times.sleepMinutes, leadMinutes: c.warmUpLeadMinutes,
                                      delayMinutes: c.powerOffDelayMinutes)
        }
        let onAbs = TimeOfDay.round(wake - times.sleepMinutes - c.warmUpLeadMinutes, toStep: step, rule: .down)
        let offAbs = TimeOfDay.round(wake + c.powerOffDelayMinutes, toStep: step, rule: .up)
        var alarm: AlarmEntry?
        if c.alarm.enabled {
            let alarmAbs = TimeOfDay.round(wake, toStep: step, rule: .nearest)
            let alarmDay = floorDiv(alarmAbs, TimeOfDay.minutesPerDay)
            alarm = AlarmEntry(days: wakeDays.shifted(byDays: alarmDay), time: TimeOfDay(wrapping: alarmAbs),
                               intensity: c.alarm.intensity, pattern: c.alarm.pattern,
                               durationSeconds: c.alarm.durationSeconds)
        }
        return NightPlan(wakeDays: wakeDays, onAbs: onAbs, onDay: floorDiv(onAbs, TimeOfDay.minutesPerDay),
                         offAbs: offAbs, alarm: alarm)
    }

    static func mergeWindows(_ windows: [PowerWindow]) -> [PowerWindow] {
        var merged: [PowerWindow] = []
        for w in windows {
            if let i = merged.firstIndex(where: { $0.on == w.on && $0.off == w.off && $0.level == w.level }) {
                merged[i].days.formUnion(w.days)
            } else {
                merged.append(w)
            }
        }
        return merged.sorted { ($0.days.rawValue & 0x7F).trailingZeroBitCount < ($1.days.rawValue & 0x7F).trailingZeroBitCount }
    }

    static func mergeAlarms(_ alarms: [AlarmEntry]) -> [AlarmEntry] {
        var merged: [AlarmEntry] = []
        for a in alarms {
            if let i = merged.firstIndex(where: {
                $0.time == a.time && $0.intensity == a.intensity && $0.pattern == a.pattern
                    && $0.durationSeconds == a.durationSeconds
            }) {
                merged[i].days.formUnion(a.days)
            } else {
                merged.append(a)
            }
        }
        return merged.sorted { $0.days.rawValue.trailingZeroBitCount < $1.days.rawValue.trailingZeroBitCount }
    }
}
