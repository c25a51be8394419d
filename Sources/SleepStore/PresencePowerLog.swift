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

extension PresencePowerChange: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "presence_power_changes"
    /// `id` (AUTOINCREMENT) orders changes of the same second; a change is its values.
    package enum Columns {
        static let id = Column("id"), podSerial = Column("pod_serial"), side = Column("side"), at = Column("at")
        static let action = Column("action"), until = Column("until"), reason = Column("reason"), text = Column("text")
        static let outcome = Column("outcome")
    }

    package init(row: Row) {
        self.init(podSerial: row[Columns.podSerial], side: BedSide(rawValue: row[Columns.side]) ?? .left, at: row[Columns.at],
                  action: row[Columns.action], until: row[Columns.until], reason: row[Columns.reason],
                  text: row[Columns.text], outcome: row[Columns.outcome])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.podSerial] = podSerial
        container[Columns.side] = side.rawValue
        container[Columns.at] = at
        container[Columns.action] = action
        container[Columns.until] = until
        container[Columns.reason] = reason
        container[Columns.text] = text
        container[Columns.outcome] = outcome
    }
}

extension NightStore {
    /// Records one presence-driven power change.
    package func recordPresencePowerChange(_ change: PresencePowerChange) async throws {
        guard !change.podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        guard ["off", "on", "hold"].contains(change.action) else {
            throw StoreError.invalidSchedule("presence power action must be off, on or hold, is \(change.action)")
        }
        try await write { db in
            try PodRecord.upsert(db, serial: change.podSerial, firmware: nil, seenAt: change.at)
            try change.insert(db)
        }
    }

    /// The newest `limit` changes of a pod from `since` (unix seconds) on, oldest first.
    package func presencePowerChanges(podSerial: String, since: Int64 = 0, limit: Int = 500) async throws -> [PresencePowerChange] {
        try await read { db in
            typealias C = PresencePowerChange.Columns
            return try PresencePowerChange
                .filter(C.podSerial == podSerial && C.at >= since)
                .order(C.at.desc, C.id.desc)
                .limit(limit)
                .fetchAll(db)
                .reversed()
        }
    }
}
