import Foundation
@testable import SleepSchedule
import SleepDomain

enum Zones {
    static let newYork = TimeZone(identifier: "America/New_York")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    static let tokyo = TimeZone(identifier: "Asia/Tokyo")!
    static let utc = TimeZone(identifier: "UTC")!
}

func t(_ text: String) -> TimeOfDay { TimeOfDay(text)! }

func date(_ y: Int, _ m: Int, _ d: Int) -> CalendarDay { CalendarDay(year: y, month: m, day: d)! }

/// The instant `time` on local `day` in `zone` (first occurrence).
func instant(_ day: CalendarDay, _ time: String, _ zone: TimeZone) -> Date {
    LocalTimeResolver.resolve(t(time), on: day, in: zone).fireInstant
}

func utc(_ y: Int, _ m: Int, _ d: Int, _ h: Int, _ min: Int) -> Date {
    Date(timeIntervalSince1970: Double(date(y, m, d).daysSinceEpoch) * 86_400 + Double(h * 3600 + min * 60))
}

/// A night that ends on local `wakeDay` at `wake`; bedtime on the same day when it is earlier
/// on the clock than the wake, else on the evening before.
func night(_ wakeDay: CalendarDay, bed: String, wake: String, zone: TimeZone, onset: Int? = nil, nap: Bool = false) -> SleepNight {
    let bedDay = t(bed) < t(wake) ? wakeDay : wakeDay.adding(days: -1)
    let start = instant(bedDay, bed, zone)
    return SleepNight(start: start, end: instant(wakeDay, wake, zone),
                      sleepOnset: onset.map { start.addingTimeInterval(Double($0 * 60)) }, isNap: nap)
}

/// Nights waking on each day from `first` for `count` days, times chosen per wake weekday.
func nights(from first: CalendarDay, count: Int, zone: TimeZone,
            times: (Weekday) -> (String, String)) -> [SleepNight] {
    (0..<count).map { i in
        let day = first.adding(days: i)
        let (bed, wake) = times(day.weekday)
        return night(day, bed: bed, wake: wake, zone: zone)
    }
}

extension Array where Element == PushAction {
    var sent: [ScheduleCommand] {
        compactMap { if case .send(let c, _) = $0 { return c } else { return nil } }
    }
    var sentKeys: [ScheduleCommandKey] { sent.map(\.key) }
    var wakeUp: Date? {
        compactMap { if case .wakeUp(let d) = $0 { return d } else { return nil } }.first
    }
    var isInSync: Bool { contains(.inSync) }
    var failures: [(ScheduleCommand, PushFailureReason, Int)] {
        compactMap { if case .failed(let c, let r, let n) = $0 { return (c, r, n) } else { return nil } }
    }
}

/// Acknowledges every command the policy sends until it stops sending; returns what was sent
/// and the last action list.
@discardableResult
func acknowledgeAll(_ policy: inout SchedulePushPolicy, _ first: [PushAction], now: Date)
    -> (sent: [ScheduleCommand], last: [PushAction]) {
    var sent: [ScheduleCommand] = []
    var actions = first
    var guardCount = 0
    while let cmd = actions.sent.first, guardCount < 50 {
        sent.append(cmd)
        actions = policy.handle(.acknowledged(cmd.key), now: now)
        guardCount += 1
    }
    return (sent, actions)
}
