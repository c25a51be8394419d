import Foundation
import SleepDomain
import SleepSchedule
import SleepStore

/// What presence-driven power tells the bus (and stores, `presence_power_changes`): a side
/// switched off or on, or its power held on past the scheduled off, why, and what the pod said.
package struct PresencePowerNotice: Sendable, Hashable, Codable {
    package var serial: String
    package var side: BedSide
    /// When the hub decided it (its clock).
    package var at: Date
    /// `off`, `on` or `hold`.
    package var action: String
    /// For a hold: the minute the pod now switches off.
    package var until: Date?
    /// The reason's kind: `bed_left`, `left_after_keep_on`, `no_show`, `away`, `back_in_bed`, `still_in_bed`,
    /// `away_cleared`, `turned_off`.
    package var reason: String
    /// "left power off at 07:42: bed empty for 15 min".
    package var text: String
    /// `ack` (SET_POWER acknowledged), `pushed` (a hold handed to the schedule driver, which
    /// records the pod's answer), or what went wrong (`nack NOT_READY`, `failed: …`).
    package var outcome: String

    package init(serial: String, side: BedSide, at: Date, action: String, until: Date?, reason: String, text: String, outcome: String) {
        self.serial = serial
        self.side = side
        self.at = at
        self.action = action
        self.until = until
        self.reason = reason
        self.text = text
        self.outcome = outcome
    }

    package init(serial: String, command: PresencePowerCommand, outcome: String) {
        let action: String, until: Date?
        switch command.action {
        case .off: (action, until) = ("off", nil)
        case .on: (action, until) = ("on", nil)
        case .holdUntil(let date): (action, until) = ("hold", date)
        }
        self.init(serial: serial, side: command.side, at: command.at, action: action, until: until,
                  reason: Self.kind(command.reason), text: command.text, outcome: outcome)
    }

    static func kind(_ reason: PresencePowerReason) -> String {
        switch reason {
        case .bedLeft: "bed_left"
        case .leftAfterKeepOn: "left_after_keep_on"
        case .noShow: "no_show"
        case .away: "away"
        case .backInBed: "back_in_bed"
        case .stillInBed: "still_in_bed"
        case .awayCleared: "away_cleared"
        case .turnedOff: "turned_off"
        }
    }

    /// The console's line: the text, and the pod's answer when it was not an ack.
    package var consoleLine: String { outcome == "ack" || outcome == "pushed" ? text : "\(text) — not done (\(outcome))" }

    /// As stored.
    package var change: PresencePowerChange {
        PresencePowerChange(podSerial: serial, side: side, at: Int64(at.timeIntervalSince1970.rounded(.down)), action: action,
                            until: until.map { Int64($0.timeIntervalSince1970.rounded(.down)) }, reason: reason, text: text,
                            outcome: outcome)
    }
}
