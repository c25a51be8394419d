import GRDB
import SleepDomain

/// One power change presence-driven power made (or tried) for a side, with its reason, as the
/// night's record, the API and the dashboard show it (migration `presence_power_changes`).
package struct PresencePowerChange: Sendable, Hashable, Codable {
    package var podSerial: String
    package var side: BedSide
    /// Unix seconds, the hub's clock.
    package var at: Int64
    /// `off`, `on` or `hold` (the pod's off moved to `until`).
    package var action: String
    package var until: Int64?
    /// The reason's kind (`bed_left`, `left_after_keep_on`, `no_show`, `away`, `back_in_bed`, `still_in_bed`).
    package var reason: String
    /// "left power off at 07:42: bed empty for 15 min".
    package var text: String
    /// `ack`, or why it did not happen (the pod's nack, a link error).
    package var outcome: String

    package init(podSerial: String, side: BedSide, at: Int64, action: String, until: Int64?, reason: String, text: String,
                 outcome: String) {
        self.podSerial = podSerial
        self.side = side
        self.at = at
        self.action = action
        self.until = until
        self.reason = reason
        self.text = text
        self.outcome = outcome
    }
}

struct PresencePowerChangeRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "presence_power_changes"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, podSerial = "pod_serial", side, at, action, until, reason, text, outcome
    }
    var id: Int64?
    var podSerial: String
    var side: String
    var at: Int64
    var action: String
    var until: Int64?
    var reason: String
    var text: String
    var outcome: String
}

extension NightStore {
    /// Records one presence-driven power change.
    package func recordPresencePowerChange(_ change: PresencePowerChange) async throws {
        guard !change.podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        guard ["off", "on", "hold"].contains(change.action) else {
            throw StoreError.invalidSchedule("presence power action must be off, on or hold, is \(change.action)")
        }
        try await write { db in
            try PodRow.upsert(db, serial: change.podSerial, firmware: nil, seenAt: change.at)
            try PresencePowerChangeRow(id: nil, podSerial: change.podSerial, side: change.side.rawValue, at: change.at,
                                       action: change.action, until: change.until, reason: change.reason, text: change.text,
                                       outcome: change.outcome).insert(db)
        }
    }

    /// The newest `limit` changes of a pod from `since` (unix seconds) on, oldest first.
    package func presencePowerChanges(podSerial: String, since: Int64 = 0, limit: Int = 500) async throws -> [PresencePowerChange] {
        try await read { db in
            try PresencePowerChangeRow
                .filter(PresencePowerChangeRow.Columns.podSerial == podSerial && PresencePowerChangeRow.Columns.at >= since)
                .order(PresencePowerChangeRow.Columns.at.desc, PresencePowerChangeRow.Columns.id.desc)
                .limit(limit)
                .fetchAll(db)
                .reversed()
                .map { PresencePowerChange(podSerial: $0.podSerial, side: BedSide(rawValue: $0.side) ?? .left, at: $0.at,
                                           action: $0.action, until: $0.until, reason: $0.reason, text: $0.text, outcome: $0.outcome) }
        }
    }
}
