/// How bedtime and wake become the pod's power windows and alarm.
public struct PodScheduleConfiguration: Hashable, Sendable, Codable {
    /// Power on this long before bedtime so the bed is warm (0…720 min).
    public var warmUpLeadMinutes: Int = 30
    /// Power off this long after the wake time (0…720 min).
    public var powerOffDelayMinutes: Int = 30
    /// Times snap to multiples of this many minutes; must divide 1440 (1, 5, 10, 15, 30, 60 …).
    public var roundingStepMinutes: Int = 5
    public var alarm = AlarmSettings()

    public init() {}

    public func validate() throws(ScheduleError) {
        guard (0...720).contains(warmUpLeadMinutes) else {
            throw .invalidConfiguration("warmUpLeadMinutes must be in 0…720, is \(warmUpLeadMinutes)")
        }
        guard (0...720).contains(powerOffDelayMinutes) else {
            throw .invalidConfiguration("powerOffDelayMinutes must be in 0…720, is \(powerOffDelayMinutes)")
        }
        guard (1...720).contains(roundingStepMinutes), ClockTime.minutesPerDay % roundingStepMinutes == 0 else {
            throw .invalidConfiguration("roundingStepMinutes must divide 1440 (1, 5, 10, 15, 30, 60…), is \(roundingStepMinutes)")
        }
        guard (0...100).contains(alarm.intensity) else {
            throw .invalidConfiguration("alarm intensity must be in 0…100, is \(alarm.intensity)")
        }
        guard (1...600).contains(alarm.durationSeconds) else {
            throw .invalidConfiguration("alarm duration must be in 1…600 s, is \(alarm.durationSeconds)")
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
/// - groups with identical times merge into one entry with the union of their days.
public enum PodScheduleConverter {
    public static func convert(
        _ schedule: ManualSchedule,
        weekendWakeDays: WeekdayMask = .saturdayAndSunday,
        side: BedSide,
        timeZoneIdentifier: String,
        configuration: PodScheduleConfiguration = PodScheduleConfiguration()
    ) throws(ScheduleError) -> PodSchedule {
        try configuration.validate()
        var windows: [PowerWindow] = []
        var alarms: [AlarmEntry] = []
        let groups: [(WeekdayMask, SleepTimes)] = [
            (WeekdayMask.everyDay.subtracting(weekendWakeDays), schedule.weekday),
            (weekendWakeDays, schedule.weekend),
        ]
        for (wakeDays, times) in groups where !wakeDays.isEmpty {
            let (window, alarm) = try entries(times, wakeDays: wakeDays, configuration)
            windows.append(window)
            if let alarm { alarms.append(alarm) }
        }
        return PodSchedule(side: side, timeZoneIdentifier: timeZoneIdentifier,
                           powerWindows: mergeWindows(windows), alarms: mergeAlarms(alarms))
    }

    /// Convenience: the times in force of an inference result.
    public static func convert(
        _ result: ScheduleInferenceResult,
        side: BedSide,
        configuration: PodScheduleConfiguration = PodScheduleConfiguration()
    ) throws(ScheduleError) -> PodSchedule {
        try convert(result.schedule, weekendWakeDays: result.weekendWakeDays, side: side,
                    timeZoneIdentifier: result.timeZoneIdentifier, configuration: configuration)
    }

    /// Minutes are counted from local midnight of the WAKE date (negative = the evening before).
    static func entries(_ times: SleepTimes, wakeDays: WeekdayMask, _ c: PodScheduleConfiguration)
        throws(ScheduleError) -> (PowerWindow, AlarmEntry?) {
        let step = c.roundingStepMinutes
        let wake = times.wake.minuteOfDay
        let window = times.sleepMinutes + c.warmUpLeadMinutes + c.powerOffDelayMinutes
        guard window < ClockTime.minutesPerDay else { throw .powerWindowTooLong(minutes: window) }
        let onAbs = ClockTime.round(wake - times.sleepMinutes - c.warmUpLeadMinutes, toStep: step, rule: .down)
        let offAbs = ClockTime.round(wake + c.powerOffDelayMinutes, toStep: step, rule: .up)
        let on = ClockTime(wrapping: onAbs), off = ClockTime(wrapping: offAbs)
        guard on != off else { throw .emptyPowerWindow(on) }
        let onDay = ClockTime.floorDiv(onAbs, ClockTime.minutesPerDay)
        let power = PowerWindow(days: wakeDays.shifted(byDays: onDay), on: on, off: off)
        guard c.alarm.enabled else { return (power, nil) }
        let alarmAbs = ClockTime.round(wake, toStep: step, rule: .nearest)
        let alarmDay = ClockTime.floorDiv(alarmAbs, ClockTime.minutesPerDay)
        let alarm = AlarmEntry(days: wakeDays.shifted(byDays: alarmDay), time: ClockTime(wrapping: alarmAbs),
                               intensity: c.alarm.intensity, pattern: c.alarm.pattern,
                               durationSeconds: c.alarm.durationSeconds)
        return (power, alarm)
    }

    static func mergeWindows(_ windows: [PowerWindow]) -> [PowerWindow] {
        var merged: [PowerWindow] = []
        for w in windows {
            if let i = merged.firstIndex(where: { $0.on == w.on && $0.off == w.off }) {
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
