import Foundation
import SleepDomain

/// Why presence-driven power changed a side: kept as data (the night's record, the API, MQTT)
/// and said as one line (`PresencePowerCommand.text`).
package enum PresencePowerReason: Hashable, Sendable, Codable {
    /// Off: the sleeper left and the side stayed empty this long (off when the bed is left).
    case bedLeft(emptyMinutes: Int)
    /// Off: past the scheduled off, kept on while occupied, then empty this long.
    case leftAfterKeepOn(emptyMinutes: Int)
    /// Off: nobody has lain in the side this long after its power-on.
    case noShow(minutesSincePowerOn: Int)
    /// Off: away, after this many nights with nobody in the side (nil: set by the user).
    case away(nights: Int?)
    /// On: someone lay down in a side the hub had switched off.
    case backInBed
    /// The pod's off moved later: the side is occupied at the scheduled off.
    case stillInBed(scheduledOff: Date)
    /// On: the owner cleared "away" (or its count) while the side was off for it.
    case awayCleared
    /// On: the owner switched presence-driven power off while the hub had the side off.
    case turnedOff
}

/// What presence-driven power asks of the pod for one side.
package enum PresencePowerAction: Hashable, Sendable, Codable {
    /// SET_POWER off now (inside a window: the pod's next `on` switches it on again).
    case off
    /// SET_POWER on now, at the window's level (only inside the pod's window).
    case on
    /// Move the pod's own off edge of the window in force to this minute, so the pod itself
    /// still ends the power there if the hub stops.
    case holdUntil(Date)
}

/// One decision of `PresencePower`, with its reason.
package struct PresencePowerCommand: Hashable, Sendable, Codable, CustomStringConvertible {
    package var side: BedSide
    package var action: PresencePowerAction
    package var at: Date
    package var reason: PresencePowerReason
    /// The pod's zone, for the `HH:mm` of the text.
    package var timeZoneIdentifier: String

    package init(side: BedSide, action: PresencePowerAction, at: Date, reason: PresencePowerReason, timeZoneIdentifier: String) {
        self.side = side
        self.action = action
        self.at = at
        self.reason = reason
        self.timeZoneIdentifier = timeZoneIdentifier
    }

    /// "left power off at 07:42: bed empty for 15 min".
    package var text: String {
        let zone = TimeZone(identifier: timeZoneIdentifier) ?? .gmt
        func clock(_ d: Date) -> String { LocalDateTime(d, in: zone).timeOfDay.description }
        let what: String
        switch action {
        case .off: what = "\(side) power off at \(clock(at))"
        case .on: what = "\(side) power on at \(clock(at))"
        case .holdUntil(let until): what = "\(side) power kept on until \(clock(until))"
        }
        let why: String
        switch reason {
        case .bedLeft(let m): why = "bed empty for \(m) min"
        case .leftAfterKeepOn(let m): why = "bed empty for \(m) min after the scheduled off"
        case .noShow(let m): why = "nobody in bed \(m) min after power-on"
        case .away(let n?): why = "away: nobody slept here for \(n) night\(n == 1 ? "" : "s")"
        case .away(nil): why = "away (set by the user)"
        case .backInBed: why = "back in bed"
        case .stillInBed(let off): why = "still in bed at the scheduled off \(clock(off))"
        case .awayCleared: why = "away cleared"
        case .turnedOff: why = "presence-driven power turned off"
        }
        return "\(what): \(why)"
    }

    package var description: String { text }
}
