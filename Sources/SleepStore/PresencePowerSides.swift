import GRDB
import SleepDomain

/// A side's presence-driven power as the owner set it at run time (the API, MQTT, the
/// dashboard), over the configuration's, and the nights in a row nobody slept in it, so that
/// "away" survives a restart (migration `presence_power_sides`). The record is the row.
package struct PresencePowerSide: Sendable, Hashable, Codable {
    package var podSerial: String
    package var side: BedSide
    /// Presence-driven power on or off for the side; nil: the configuration's
    /// `schedule.presencePower.enabled`.
    package var enabled: Bool?
    /// The side's rules; nil: the configuration's `schedule.presencePower.<side>`.
    package var settings: PresencePowerSettings?
    /// Power windows in a row that ended with nobody in the side.
    package var emptyNights: Int
    /// Unix seconds of the last change (the hub's clock).
    package var setAt: Int64

    package init(podSerial: String, side: BedSide, enabled: Bool? = nil, settings: PresencePowerSettings? = nil,
                 emptyNights: Int = 0, setAt: Int64) {
        self.podSerial = podSerial
        self.side = side
        self.enabled = enabled
        self.settings = settings
        self.emptyNights = emptyNights
        self.setAt = setAt
    }

    enum CodingKeys: String, CodingKey, ColumnExpression {
        case podSerial = "pod_serial", side, enabled, settings, emptyNights = "empty_nights", setAt = "set_at"
    }
}

extension PresencePowerSide: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "presence_power_sides"
}

extension NightStore {
    /// The side's stored presence-driven power, nil when nothing was ever stored for it.
    package func presencePowerSide(podSerial: String, side: BedSide) async throws -> PresencePowerSide? {
        try await read { db in
            try PresencePowerSide.of(podSerial: podSerial, side: side).fetchOne(db)
        }
    }

    /// Stores what the owner chose for the side (nil: the configuration's), keeping its count of
    /// empty nights unless `resetEmptyNights` (the owner said the side is no longer away).
    package func savePresencePowerChoice(podSerial: String, side: BedSide, enabled: Bool?, settings: PresencePowerSettings?,
                                         resetEmptyNights: Bool, at: Int64) async throws {
        guard !podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        try await write { db in
            try PodRecord.upsert(db, serial: podSerial, firmware: nil, seenAt: at)
            var record = try PresencePowerSide.of(podSerial: podSerial, side: side).fetchOne(db)
                ?? PresencePowerSide(podSerial: podSerial, side: side, setAt: at)
            record.enabled = enabled
            record.settings = settings
            if resetEmptyNights { record.emptyNights = 0 }
            record.setAt = at
            try record.save(db)
        }
    }

    /// Stores the side's count of empty nights, keeping what the owner chose.
    package func savePresencePowerEmptyNights(podSerial: String, side: BedSide, count: Int, at: Int64) async throws {
        guard !podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        guard count >= 0 else { throw StoreError.invalidSchedule("empty nights must be ≥ 0, is \(count)") }
        try await write { db in
            try PodRecord.upsert(db, serial: podSerial, firmware: nil, seenAt: at)
            var record = try PresencePowerSide.of(podSerial: podSerial, side: side).fetchOne(db)
                ?? PresencePowerSide(podSerial: podSerial, side: side, setAt: at)
            record.emptyNights = count
            try record.save(db)
        }
    }
}
