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
