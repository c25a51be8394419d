import Foundation
import SleepDomain

/// One daylight-saving transition of the pod's zone, as the hub converts around it
/// (firmware-protocol.md §7.4): from the pre-push (`start`) until the skipped or repeated
/// hour is over (`end` = the transition + the jump).
package struct TransitionWindow: Hashable, Sendable {
    /// The instant the offset changes (the hub's SET_CLOCK with the new offset).
    package var transition: Date
    /// The pre-push: the transition − the lead.
    package var start: Date
    /// The transition + the jump: the skipped or repeated local hour is over.
    package var end: Date
    /// The local date of the transition.
    package var day: CalendarDay
    /// Minutes the local clock jumps: positive forward (spring), negative back (fall).
    package var jumpMinutes: Int
    /// The local minute of day at the transition by the old offset (02:00 in New York both ways).
    package var localMinute: Int

    /// Local minutes of `day` that do not exist (forward) or occur twice (back).
    package var affectedMinutes: Range<Int> {
        jumpMinutes > 0 ? localMinute..<(localMinute + jumpMinutes) : (localMinute + jumpMinutes)..<localMinute
    }

    /// The transition of `zone` whose window holds `now`, if any.
    package static func around(_ now: Date, in zone: TimeZone, lead: TimeInterval) -> TransitionWindow? {
        // A window spans at most the lead and a few hours; transitions are months apart.
        guard let t = zone.nextDaylightSavingTimeTransition(after: now.addingTimeInterval(-(6 * 3600))) else { return nil }
        let old = zone.secondsFromGMT(for: t.addingTimeInterval(-1))
        let new = zone.secondsFromGMT(for: t)
        let jump = (new - old) / 60
        guard jump != 0 else { return nil }
        let wall = Int((t.timeIntervalSince1970).rounded(.down)) + old
        let day = CalendarDay(daysSinceEpoch: floorDiv(wall, 86_400))
        let window = TransitionWindow(transition: t, start: t.addingTimeInterval(-lead),
                                      end: t.addingTimeInterval(Double(abs(jump) * 60)), day: day, jumpMinutes: jump,
                                      localMinute: (wall - day.daysSinceEpoch * 86_400) / 60)
        return now >= window.start && now < window.end ? window : nil
    }
}

/// What the hub sends for a local time the pod holds, so the pod never meets a time the
/// transition skips or repeats (firmware-protocol.md §7.4, docs/schedule.md "DST days"):
/// - forward: a time in the skipped hour that next occurs on the transition day is sent as the
///   first minute after the jump (02:30 → 03:00) from the pre-push until the hour is over;
/// - back: from the transition until the repeated hour is over, an alarm in it is sent without
///   the transition day (its first occurrence, before the transition, has fired), or cleared
///   when that was its only day. Power switches there are sent unchanged (a second edge to the
///   state the side is in changes nothing).
/// Outside a transition's window everything is sent as it is. Pure: no clock but `now`.
package enum DaylightSavingConversion {
    /// The alarm to send at `now` for `entry`; nil means none (CLEAR_ALARM).
    package static func alarm(_ entry: AlarmEntry, at now: Date, in zone: TimeZone, lead: TimeInterval) -> AlarmEntry? {
        guard let w = TransitionWindow.around(now, in: zone, lead: lead),
              w.affectedMinutes.contains(entry.time.minuteOfDay), entry.days.contains(w.day.weekday) else { return entry }
        var sent = entry
        if w.jumpMinutes > 0 {
            sent.time = TimeOfDay(wrapping: w.localMinute + w.jumpMinutes)
        } else {
            guard now >= w.transition else { return entry }  // the first occurrence fires as usual
            sent.days.remove(w.day.weekday.mask)
            if sent.days.isEmpty { return nil }
        }
        return sent
    }

    /// The power window to send at `now` for `window`: its `on` or `off` moved out of a skipped
    /// hour on the transition day (a repeated hour leaves it as it is).
    package static func powerWindow(_ window: PowerWindow, at now: Date, in zone: TimeZone, lead: TimeInterval) -> PowerWindow {
        guard let w = TransitionWindow.around(now, in: zone, lead: lead), w.jumpMinutes > 0 else { return window }
        let firstAfter = TimeOfDay(wrapping: w.localMinute + w.jumpMinutes)
        var sent = window
        if w.affectedMinutes.contains(window.on.minuteOfDay), window.days.contains(w.day.weekday) { sent.on = firstAfter }
        // The off of the window that started that day, or the day before when it crosses midnight.
        let offStartDay = window.crossesMidnight ? w.day.weekday.advanced(by: -1) : w.day.weekday
        if w.affectedMinutes.contains(window.off.minuteOfDay), window.days.contains(offStartDay) { sent.off = firstAfter }
        return sent.on == sent.off ? window : sent  // never a 24-hour window made of a short one
    }
}
