import Foundation
import PodProtocol
import SleepSchedule
import SleepStore
import SleepDomain

// The schedule module and the pod share the domain's words (BedSide, TimeOfDay, WeekdayMask);
// only the schedule's own types (VibrationPattern, PowerWindow, AlarmEntry) are translated
// to PodProtocol's messages here.

extension WeekdayMask {
    /// "Mon–Fri", "Sun–Thu", "Sat,Sun", "every day": runs of three or more days are ranges,
    /// wrapping round the week.
    public var compactDescription: String {
        if self == .everyDay { return "every day" }
        if isEmpty { return "no day" }
        // Start at a day after a day that is not in the set, so a run never straddles the start.
        let startIndex = (0..<7).first { !contains(Weekday(rawValue: ($0 + 6) % 7)!) && contains(Weekday(rawValue: $0)!) } ?? 0
        var runs: [[Weekday]] = []
        for offset in 0..<7 {
            let day = Weekday(rawValue: (startIndex + offset) % 7)!
            if contains(day) {
                if let last = runs.last?.last, last.advanced(by: 1) == day { runs[runs.count - 1].append(day) } else { runs.append([day]) }
            }
        }
        return runs.map { run in
            run.count >= 3 ? "\(run.first!)–\(run.last!)" : run.map(\.description).joined(separator: ",")
        }.joined(separator: ",")
    }
}

extension VibrationPattern {
    public var wire: AlarmPattern {
        switch self {
        case .double: .double
        case .rise: .rise
        case .constant: .constant
        }
    }
}

extension PowerWindow {
    /// One SET_POWER_SCHEDULE for this window on `side`.
    public func wire(side: BedSide) -> PowerSchedule {
        PowerSchedule(side: side, days: days, on: on, off: off, level: UInt8(clamping: level))
    }

    /// "22:00→07:30 (Sun–Thu)", with the level when it is not 100 %.
    public var shortDescription: String {
        "\(on)→\(off) (\(days.compactDescription))" + (level == 100 ? "" : " at \(level)%")
    }
}

extension AlarmEntry {
    /// SET_ALARM for this entry on `side`.
    public func wire(side: BedSide) -> PodProtocol.AlarmSetting {
        PodProtocol.AlarmSetting(side: side, days: days, time: time, intensity: UInt8(clamping: intensity),
                                 pattern: pattern.wire, durationSeconds: UInt16(clamping: durationSeconds))
    }

    /// "07:00 rise 60% (Mon–Fri)".
    public var shortDescription: String { "\(time) \(pattern) \(intensity)% (\(days.compactDescription))" }
}

extension PodSchedule {
    /// "power 22:00→07:30 (Sun–Thu), 23:30→09:30 (Fri,Sat); alarm 07:00 rise 60% (Mon–Fri), …".
    public var summary: String {
        let power = powerWindows.isEmpty ? "power off" : "power " + powerWindows.map(\.shortDescription).joined(separator: ", ")
        let alarm = alarms.isEmpty ? "no alarm" : "alarm " + alarms.map(\.shortDescription).joined(separator: ", ")
        return power + "; " + alarm
    }

    /// Stable JSON (sorted keys) for the store; equal schedules give equal text.
    public func storedJSON() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    public static func fromStoredJSON(_ text: String) throws -> PodSchedule {
        try JSONDecoder().decode(PodSchedule.self, from: Data(text.utf8))
    }
}

extension ScheduleCommand {
    /// What this command carries, for the console and the push history.
    public var humanDescription: String {
        switch self {
        case .setClock(let sync):
            return "clock \(sync.timeZoneIdentifier) UTC\(Self.offsetText(sync.utcOffsetMinutes))"
        case .setPowerSchedule(let side, let windows):
            return "\(side) power " + (windows.isEmpty ? "cleared" : windows.map(\.shortDescription).joined(separator: ", "))
        case .setAlarm(let side, let entry):
            return "\(side) alarm " + (entry.map(\.shortDescription) ?? "cleared")
        }
    }

    /// "+01:00", "−05:00".
    static func offsetText(_ minutes: Int) -> String {
        let sign = minutes < 0 ? "−" : "+"
        let m = abs(minutes)
        return sign + (m / 60 < 10 ? "0" : "") + String(m / 60) + ":" + (m % 60 < 10 ? "0" : "") + String(m % 60)
    }
}

extension HubClock {
    /// What SET_CLOCK carries: this clock's now and the pod zone's UTC offset now. The pod
    /// link's start-up SET_CLOCK and the schedule service's re-syncs both come from here,
    /// so they agree (accelerated clocks included).
    public func clockSetting(podZone: TimeZone) -> ClockSetting {
        let now = now()
        return clockSetting(at: now, utcOffsetMinutes: podZone.secondsFromGMT(for: now) / 60)
    }

    /// SET_CLOCK for `at` with a given UTC offset (the schedule policy's, e.g. just after a
    /// DST change). The one place the message's fields are built; never traps on the offset.
    public func clockSetting(at: Date? = nil, utcOffsetMinutes: Int) -> ClockSetting {
        let time = at ?? now()
        return ClockSetting(unixMillis: Int64((time.timeIntervalSince1970 * 1000).rounded(.down)),
                            utcOffsetMinutes: Int16(clamping: utcOffsetMinutes))
    }
}
