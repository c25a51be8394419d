import Foundation
import Hub
import HubMQTT

extension MQTTPayloads {
    /// `<base>/<serial>/<side>/presence_power`: presence-driven power's last change of the side.
    package static func presencePower(_ notice: PresencePowerNotice) -> JSONValue {
        ["action": .string(notice.action), "reason": .string(notice.reason), "text": .string(notice.text),
         "outcome": .string(notice.outcome), "time": .string(rfc3339(notice.at)),
         "until": .string(notice.until.map { rfc3339($0) })]
    }
}

extension MQTTPayloads {
    /// `<base>/<serial>/<side>/presence_power/state`: the side's presence-driven power in force
    /// (Home Assistant's switches and numbers read it). `away` is away in force (set, or counted
    /// from empty nights); `away_set` only the owner's.
    package static func presencePowerState(_ p: PresencePowerInForce) -> JSONValue {
        let s = p.settings
        return ["enabled": .bool(p.enabled), "keep_on_while_occupied": .bool(s.keepOnWhileOccupied),
                "keep_on_after_leaving_minutes": .number(Double(s.keepOnAfterLeavingMinutes)),
                "keep_on_limit_minutes": .number(Double(s.keepOnLimitMinutes)), "off_when_left": .bool(s.offWhenLeft),
                "off_when_left_minutes": .number(Double(s.offWhenLeftMinutes)), "no_show_minutes": .number(Double(s.noShowMinutes)),
                "away_after_nights": .number(Double(s.awayAfterNights)), "away": .bool(p.isAway), "away_set": .bool(s.away),
                "empty_nights": .number(Double(p.emptyNights)), "source": .string(p.source)]
    }
}
