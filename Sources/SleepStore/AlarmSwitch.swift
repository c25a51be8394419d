import GRDB
import SleepDomain

// A side's alarm switch (migration v7): off keeps the schedule (power, wake time for
// inference) but clears the side's alarm on the pod, until switched on again. Set from MQTT
// (Home Assistant's alarm switch); no row means on.

/// A side's alarm switch as set: on or off, and when.
struct AlarmSwitch: FetchableRecord, PersistableRecord {
    static let databaseTableName = "alarm_switches"
    package enum Columns {
        static let podSerial = Column("pod_serial"), side = Column("side"), enabled = Column("enabled")
        static let setAt = Column("set_at")
    }

    var podSerial: String
    var side: BedSide
    var enabled: Bool
    var setAt: Int64

    init(podSerial: String, side: BedSide, enabled: Bool, setAt: Int64) {
        self.podSerial = podSerial
        self.side = side
        self.enabled = enabled
        self.setAt = setAt
    }

    init(row: Row) {
        self.init(podSerial: row[Columns.podSerial], side: BedSide(rawValue: row[Columns.side]) ?? .left,
                  enabled: row[Columns.enabled], setAt: row[Columns.setAt])
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.podSerial] = podSerial
        container[Columns.side] = side.rawValue
        container[Columns.enabled] = enabled
        container[Columns.setAt] = setAt
    }
}

extension NightStore {
    /// Switches a side's alarm on or off (remembered across restarts).
    package func setAlarmEnabled(podSerial: String, side: BedSide, enabled: Bool, at: Int64) async throws {
        guard !podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        try await write { db in
            try PodRecord.upsert(db, serial: podSerial, firmware: nil, seenAt: at)
            try AlarmSwitch(podSerial: podSerial, side: side, enabled: enabled, setAt: at)
                .insert(db, onConflict: .replace)
        }
    }

    /// Whether a side's alarm is on: true unless it was switched off.
    package func alarmEnabled(podSerial: String, side: BedSide) async throws -> Bool {
        try await read { db in
            try AlarmSwitch.of(podSerial: podSerial, side: side).fetchOne(db)?.enabled ?? true
        }
    }
}
