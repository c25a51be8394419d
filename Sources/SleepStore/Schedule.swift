import GRDB
import SleepDomain

/// Who decided a schedule: the user (always wins) or the inference from past nights.
public enum ScheduleSource: String, Sendable, Codable {
    case manual
    case inferred
}

/// The alarm part of a schedule.
public struct AlarmSetting: Sendable, Hashable, Codable {
    /// Local wall-clock time `HH:mm`.
    public var time: String
    /// 0–100.
    public var intensity: Int
    public var pattern: String
    public var durationSeconds: Int

    public init(time: String, intensity: Int, pattern: String, durationSeconds: Int) {
        self.time = time
        self.intensity = intensity
        self.pattern = pattern
        self.durationSeconds = durationSeconds
    }
}

/// A per-side power schedule and alarm as sent to the pod: local `HH:mm` times (an off time
/// earlier than the on time crosses midnight and is valid), a weekday mask (bit 0 = Monday
/// … bit 6 = Sunday) and the zone they are local to.
public struct ScheduleRecord: Sendable, Hashable, Codable {
    public var podSerial: String
    public var side: BedSide
    public var powerOn: String
    public var powerOff: String
    public var weekdayMask: Int
    public var alarm: AlarmSetting?
    public var source: ScheduleSource
    public var timeZoneID: String

    public init(
        podSerial: String, side: BedSide, powerOn: String, powerOff: String, weekdayMask: Int,
        alarm: AlarmSetting?, source: ScheduleSource, timeZoneID: String
    ) {
        self.podSerial = podSerial
        self.side = side
        self.powerOn = powerOn
        self.powerOff = powerOff
        self.weekdayMask = weekdayMask
        self.alarm = alarm
        self.source = source
        self.timeZoneID = timeZoneID
    }
}

/// A schedule with when it was set and (for the one in force) when it last reached the pod.
public struct ScheduleEntry: Sendable, Hashable {
    public var schedule: ScheduleRecord
    public var setAt: Int64
    public var pushedAt: Int64?
}

extension SleepStore {
    /// Makes `schedule` the one in force for its pod and side and appends it to the history,
    /// in one transaction. Returns false (and writes nothing) when it equals the one in force,
    /// so callers can push to the pod only on change.
    @discardableResult
    public func setSchedule(_ schedule: ScheduleRecord) throws -> Bool {
        try Self.validate(schedule)
        let now = clock.unixSeconds()
        return try pool.write { db in
            if let current = try Self.fetchInForce(db, podSerial: schedule.podSerial, side: schedule.side),
               current.schedule == schedule { return false }
            try Self.upsertPod(db, serial: schedule.podSerial, firmware: nil, seenAt: now)
            let a = schedule.alarm
            let args: StatementArguments = [
                schedule.podSerial, schedule.side.rawValue, schedule.powerOn, schedule.powerOff, schedule.weekdayMask,
                a?.time, a?.intensity, a?.pattern, a?.durationSeconds, schedule.source.rawValue, schedule.timeZoneID, now,
            ]
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO schedule_in_force (pod_serial, side, power_on, power_off, weekday_mask,
                        alarm_time, alarm_intensity, alarm_pattern, alarm_duration_s, source, time_zone, set_at, pushed_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)
                    """,
                arguments: args)
            try db.execute(
                sql: """
                    INSERT INTO schedule_history (pod_serial, side, power_on, power_off, weekday_mask,
                        alarm_time, alarm_intensity, alarm_pattern, alarm_duration_s, source, time_zone, set_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: args)
            return true
        }
    }

    /// The schedule in force for a pod side, if any.
    public func scheduleInForce(podSerial: String, side: BedSide) throws -> ScheduleEntry? {
        try pool.read { db in try Self.fetchInForce(db, podSerial: podSerial, side: side) }
    }

    /// Records that the schedule in force reached the pod at `at`.
    public func markSchedulePushed(podSerial: String, side: BedSide, at: Int64) throws {
        try pool.write { db in
            try db.execute(
                sql: "UPDATE schedule_in_force SET pushed_at = ? WHERE pod_serial = ? AND side = ?",
                arguments: [at, podSerial, side.rawValue])
        }
    }

    /// Every schedule ever set for a pod side, oldest first.
    public func scheduleHistory(podSerial: String, side: BedSide) throws -> [ScheduleEntry] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT *, NULL AS pushed_at FROM schedule_history WHERE pod_serial = ? AND side = ? ORDER BY set_at, id",
                arguments: [podSerial, side.rawValue]
            ).map(Self.scheduleEntry(from:))
        }
    }

    static func fetchInForce(_ db: Database, podSerial: String, side: BedSide) throws -> ScheduleEntry? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM schedule_in_force WHERE pod_serial = ? AND side = ?",
            arguments: [podSerial, side.rawValue]
        ).map(scheduleEntry(from:))
    }

    static func scheduleEntry(from row: Row) -> ScheduleEntry {
        var alarm: AlarmSetting?
        if let time: String = row["alarm_time"] {
            alarm = AlarmSetting(
                time: time, intensity: row["alarm_intensity"] ?? 0, pattern: row["alarm_pattern"] ?? "",
                durationSeconds: row["alarm_duration_s"] ?? 0)
        }
        let schedule = ScheduleRecord(
            podSerial: row["pod_serial"], side: BedSide(rawValue: row["side"]) ?? .left,
            powerOn: row["power_on"], powerOff: row["power_off"], weekdayMask: row["weekday_mask"],
            alarm: alarm, source: ScheduleSource(rawValue: row["source"]) ?? .manual, timeZoneID: row["time_zone"])
        return ScheduleEntry(schedule: schedule, setAt: row["set_at"], pushedAt: row["pushed_at"])
    }

    static func validate(_ s: ScheduleRecord) throws {
        func isHHmm(_ text: String) -> Bool {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
                  let h = Int(parts[0]), let m = Int(parts[1]) else { return false }
            return (0...23).contains(h) && (0...59).contains(m)
        }
        guard isHHmm(s.powerOn), isHHmm(s.powerOff) else {
            throw StoreError.invalidSchedule("power times must be HH:mm (got \(s.powerOn)–\(s.powerOff))")
        }
        guard (0...127).contains(s.weekdayMask) else { throw StoreError.invalidSchedule("weekday mask \(s.weekdayMask) is outside 0–127") }
        guard !s.podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        if let a = s.alarm {
            guard isHHmm(a.time) else { throw StoreError.invalidSchedule("alarm time must be HH:mm (got \(a.time))") }
            guard (0...100).contains(a.intensity) else { throw StoreError.invalidSchedule("alarm intensity \(a.intensity) is outside 0–100") }
            guard a.durationSeconds > 0 else { throw StoreError.invalidSchedule("alarm duration must be positive") }
        }
    }
}
