import GRDB
import SleepDomain

// The schedule service's state (migration v3): the pod schedule in force per side, the
// user's manual schedule per side, every command pushed with the pod's answer, and the
// alarm events pods report. The store keeps the schedule as JSON text so it stays
// independent of the schedule module's types (the hub encodes and decodes it).

/// Where the schedule in force for a side came from.
public enum PodScheduleOrigin: String, Sendable, Codable, Hashable, CaseIterable {
    /// The user's manual schedule (wins until cleared).
    case manual
    /// Inferred from the side's past nights.
    case inferred
    /// Too few or too irregular nights: the configured default.
    case `default`
}

/// The full schedule in force for one pod side (power windows and alarm entries).
public struct PodScheduleState: Sendable, Hashable {
    public var podSerial: String
    public var side: BedSide
    public var origin: PodScheduleOrigin
    /// The schedule as the hub encodes it (SleepSchedule's `PodSchedule` in JSON).
    public var scheduleJSON: String
    /// One human line, e.g. "power 22:00→07:30 (Sun–Thu), alarm 07:00 rise 60%".
    public var summary: String
    /// Why this schedule (manual, inferred from n nights, default because …).
    public var reason: String
    public var timeZoneID: String
    /// Unix seconds (hub clock) it became the one in force.
    public var setAt: Int64
    /// Unix seconds the pod last acknowledged every command of this side; nil when not yet.
    public var acknowledgedAt: Int64?

    public init(podSerial: String, side: BedSide, origin: PodScheduleOrigin, scheduleJSON: String, summary: String,
                reason: String, timeZoneID: String, setAt: Int64, acknowledgedAt: Int64? = nil) {
        self.podSerial = podSerial
        self.side = side
        self.origin = origin
        self.scheduleJSON = scheduleJSON
        self.summary = summary
        self.reason = reason
        self.timeZoneID = timeZoneID
        self.setAt = setAt
        self.acknowledgedAt = acknowledgedAt
    }
}

/// A bedtime and wake time the user set for one side, weekday nights and weekend nights
/// (`HH:mm` local to the pod's zone). It wins over inference until cleared.
public struct ManualScheduleRecord: Sendable, Hashable {
    public var podSerial: String
    public var side: BedSide
    public var weekdayBedtime: String
    public var weekdayWake: String
    public var weekendBedtime: String
    public var weekendWake: String
    public var setAt: Int64

    public init(podSerial: String, side: BedSide, weekdayBedtime: String, weekdayWake: String,
                weekendBedtime: String, weekendWake: String, setAt: Int64) {
        self.podSerial = podSerial
        self.side = side
        self.weekdayBedtime = weekdayBedtime
        self.weekdayWake = weekdayWake
        self.weekendBedtime = weekendBedtime
        self.weekendWake = weekendWake
        self.setAt = setAt
    }
}

/// The pod's answer to one pushed command.
public enum PushOutcome: String, Sendable, Codable, Hashable {
    /// Status OK.
    case ack
    /// Any other status (`status` names it).
    case nack
    /// No answer after the link's retransmissions.
    case timeout
    /// The link went away while the command was outstanding.
    case linkLost = "link_lost"
}

/// One command sent to a pod and what came back.
public struct SchedulePushRecord: Sendable, Hashable {
    public var id: Int64?
    public var podSerial: String
    /// Unix seconds (hub clock) when it was sent.
    public var sentAt: Int64
    /// The command's key: `set-clock`, `set-power-schedule(left)`, `set-alarm(right)`.
    public var command: String
    /// What was sent, for people ("power 22:00→07:30 (Sun–Thu)", "clock UTC−05:00").
    public var description: String
    /// 1 for the first try of a value.
    public var attempt: Int
    public var outcome: PushOutcome
    /// The nack status name (`busy`, `bad value`, …); nil unless `outcome == .nack`.
    public var status: String?
    /// Any further detail (the link error's text).
    public var detail: String?

    public init(id: Int64? = nil, podSerial: String, sentAt: Int64, command: String, description: String,
                attempt: Int, outcome: PushOutcome, status: String? = nil, detail: String? = nil) {
        self.id = id
        self.podSerial = podSerial
        self.sentAt = sentAt
        self.command = command
        self.description = description
        self.attempt = attempt
        self.outcome = outcome
        self.status = status
        self.detail = detail
    }
}

/// An event a pod reported (alarm started, stopped, snoozed, failed …).
public struct PodEventRecord: Sendable, Hashable {
    public var id: Int64?
    public var podSerial: String
    /// Unix seconds of the event (from the pod's tick and the clock anchor).
    public var at: Int64
    /// `alarm_started`, `alarm_stopped`, `alarm_snoozed`, `alarm_failed`, …
    public var kind: String
    public var side: BedSide?
    public var argument: Int
    public var description: String

    public init(id: Int64? = nil, podSerial: String, at: Int64, kind: String, side: BedSide?, argument: Int,
                description: String) {
        self.id = id
        self.podSerial = podSerial
        self.at = at
        self.kind = kind
        self.side = side
        self.argument = argument
        self.description = description
    }
}

extension SleepStore {
    // MARK: Schedule in force

    /// Makes `state` the schedule in force for its pod side. Returns true when the schedule
    /// itself (JSON) or its origin changed; then the acknowledgement is cleared. A changed
    /// reason or summary alone is updated and returns false.
    @discardableResult
    public func setPodSchedule(_ state: PodScheduleState) throws -> Bool {
        guard !state.podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        return try pool.write { db in
            let current = try Self.fetchPodSchedule(db, podSerial: state.podSerial, side: state.side)
            if let current, current.scheduleJSON == state.scheduleJSON, current.origin == state.origin {
                if current.reason != state.reason || current.summary != state.summary {
                    try db.execute(
                        sql: "UPDATE pod_schedule SET reason = ?, summary = ? WHERE pod_serial = ? AND side = ?",
                        arguments: [state.reason, state.summary, state.podSerial, state.side.rawValue])
                }
                return false
            }
            try Self.upsertPod(db, serial: state.podSerial, firmware: nil, seenAt: state.setAt)
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO pod_schedule (pod_serial, side, origin, schedule_json, summary, reason,
                        time_zone, set_at, acknowledged_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [state.podSerial, state.side.rawValue, state.origin.rawValue, state.scheduleJSON,
                            state.summary, state.reason, state.timeZoneID, state.setAt, state.acknowledgedAt])
            return true
        }
    }

    /// The schedule in force for a pod side, if one was ever computed.
    public func podSchedule(podSerial: String, side: BedSide) throws -> PodScheduleState? {
        try pool.read { db in try Self.fetchPodSchedule(db, podSerial: podSerial, side: side) }
    }

    /// Records that the pod acknowledged the whole schedule of a side at `at`.
    public func markPodScheduleAcknowledged(podSerial: String, side: BedSide, at: Int64) throws {
        try pool.write { db in
            try db.execute(
                sql: "UPDATE pod_schedule SET acknowledged_at = ? WHERE pod_serial = ? AND side = ?",
                arguments: [at, podSerial, side.rawValue])
        }
    }

    static func fetchPodSchedule(_ db: Database, podSerial: String, side: BedSide) throws -> PodScheduleState? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM pod_schedule WHERE pod_serial = ? AND side = ?",
            arguments: [podSerial, side.rawValue]
        ).map { row in
            PodScheduleState(
                podSerial: row["pod_serial"], side: BedSide(rawValue: row["side"]) ?? .left,
                origin: PodScheduleOrigin(rawValue: row["origin"]) ?? .default, scheduleJSON: row["schedule_json"],
                summary: row["summary"], reason: row["reason"], timeZoneID: row["time_zone"], setAt: row["set_at"],
                acknowledgedAt: row["acknowledged_at"])
        }
    }

    // MARK: Manual schedule

    /// Sets (or replaces) the user's manual schedule of a side. Times must be `HH:mm`.
    public func setManualSchedule(_ record: ManualScheduleRecord) throws {
        guard !record.podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        for (name, value) in [("weekday bedtime", record.weekdayBedtime), ("weekday wake", record.weekdayWake),
                              ("weekend bedtime", record.weekendBedtime), ("weekend wake", record.weekendWake)] {
            guard Self.isHHmm(value) else { throw StoreError.invalidSchedule("\(name) must be HH:mm (got \(value))") }
        }
        try pool.write { db in
            try Self.upsertPod(db, serial: record.podSerial, firmware: nil, seenAt: record.setAt)
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO manual_schedule (pod_serial, side, weekday_bedtime, weekday_wake,
                        weekend_bedtime, weekend_wake, set_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [record.podSerial, record.side.rawValue, record.weekdayBedtime, record.weekdayWake,
                            record.weekendBedtime, record.weekendWake, record.setAt])
        }
    }

    /// The manual schedule of a side, nil when none is set (inference applies).
    public func manualSchedule(podSerial: String, side: BedSide) throws -> ManualScheduleRecord? {
        try pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM manual_schedule WHERE pod_serial = ? AND side = ?",
                arguments: [podSerial, side.rawValue]
            ).map { row in
                ManualScheduleRecord(
                    podSerial: row["pod_serial"], side: BedSide(rawValue: row["side"]) ?? .left,
                    weekdayBedtime: row["weekday_bedtime"], weekdayWake: row["weekday_wake"],
                    weekendBedtime: row["weekend_bedtime"], weekendWake: row["weekend_wake"], setAt: row["set_at"])
            }
        }
    }

    /// Removes the manual schedule of a side; returns false when there was none.
    @discardableResult
    public func clearManualSchedule(podSerial: String, side: BedSide) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM manual_schedule WHERE pod_serial = ? AND side = ?",
                           arguments: [podSerial, side.rawValue])
            return db.changesCount > 0
        }
    }

    static func isHHmm(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              let h = Int(parts[0]), let m = Int(parts[1]) else { return false }
        return (0...23).contains(h) && (0...59).contains(m)
    }

    // MARK: Push history

    /// Appends one pushed command and the pod's answer; returns its row id.
    @discardableResult
    public func recordSchedulePush(_ push: SchedulePushRecord) throws -> Int64 {
        guard push.attempt >= 1 else { throw StoreError.invalidSchedule("push attempt must be ≥ 1") }
        return try pool.write { db in
            try Self.upsertPod(db, serial: push.podSerial, firmware: nil, seenAt: push.sentAt)
            try db.execute(
                sql: """
                    INSERT INTO schedule_pushes (pod_serial, sent_at, command, description, attempt, outcome, status, detail)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [push.podSerial, push.sentAt, push.command, push.description, push.attempt,
                            push.outcome.rawValue, push.status, push.detail])
            return db.lastInsertedRowID
        }
    }

    /// Pushes to a pod, oldest first (the last `limit` when given).
    public func schedulePushes(podSerial: String, limit: Int? = nil) throws -> [SchedulePushRecord] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM (SELECT * FROM schedule_pushes WHERE pod_serial = ? ORDER BY id DESC LIMIT ?)
                    ORDER BY id
                    """,
                arguments: [podSerial, limit ?? -1]
            ).map { row in
                SchedulePushRecord(
                    id: row["id"], podSerial: row["pod_serial"], sentAt: row["sent_at"], command: row["command"],
                    description: row["description"], attempt: row["attempt"],
                    outcome: PushOutcome(rawValue: row["outcome"]) ?? .timeout, status: row["status"],
                    detail: row["detail"])
            }
        }
    }

    // MARK: Pod events

    /// Appends an event a pod reported; returns its row id.
    @discardableResult
    public func recordPodEvent(_ event: PodEventRecord) throws -> Int64 {
        try pool.write { db in
            try Self.upsertPod(db, serial: event.podSerial, firmware: nil, seenAt: event.at)
            try db.execute(
                sql: "INSERT INTO pod_events (pod_serial, at, kind, side, argument, description) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [event.podSerial, event.at, event.kind, event.side?.rawValue, event.argument, event.description])
            return db.lastInsertedRowID
        }
    }

    /// Events of a pod in the order they were recorded (the last `limit` when given).
    public func podEvents(podSerial: String, limit: Int? = nil) throws -> [PodEventRecord] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT * FROM (SELECT * FROM pod_events WHERE pod_serial = ? ORDER BY id DESC LIMIT ?) ORDER BY id",
                arguments: [podSerial, limit ?? -1]
            ).map { row in
                PodEventRecord(
                    id: row["id"], podSerial: row["pod_serial"], at: row["at"], kind: row["kind"],
                    side: (row["side"] as String?).flatMap(BedSide.init(rawValue:)), argument: row["argument"],
                    description: row["description"])
            }
        }
    }
}
