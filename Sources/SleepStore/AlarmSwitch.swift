import GRDB
import SleepDomain

// A side's alarm switch (migration v7): off keeps the schedule (power, wake time for
// inference) but clears the side's alarm on the pod, until switched on again. Set from MQTT
// (Home Assistant's alarm switch); no row means on.

struct AlarmSwitchRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "alarm_switches"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case podSerial = "pod_serial", side, enabled, setAt = "set_at"
    }
    var podSerial: String
    var side: String
    var enabled: Bool
    var setAt: Int64
}

extension NightStore {
    /// Switches a side's alarm on or off (remembered across restarts).
    package func setAlarmEnabled(podSerial: String, side: BedSide, enabled: Bool, at: Int64) async throws {
        guard !podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        try await write { db in
            try PodRow.upsert(db, serial: podSerial, firmware: nil, seenAt: at)
            try AlarmSwitchRow(podSerial: podSerial, side: side.rawValue, enabled: enabled, setAt: at)
                .insert(db, onConflict: .replace)
        }
    }

    /// Whether a side's alarm is on: true unless it was switched off.
    package func alarmEnabled(podSerial: String, side: BedSide) async throws -> Bool {
        try await read { db in
            try AlarmSwitchRow.filter(AlarmSwitchRow.Columns.podSerial == podSerial
                                      && AlarmSwitchRow.Columns.side == side.rawValue).fetchOne(db)?.enabled ?? true
        }
    }
}
