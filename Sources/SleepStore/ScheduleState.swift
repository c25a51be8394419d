import GRDB
import SleepDomain

// The schedule service's state (migration v3): the pod schedule in force per side, the
// user's manual schedule per side, every command pushed with the pod's answer, and the
// alarm events pods report. The store keeps the schedule as JSON text so it stays
// independent of the schedule module's types (the hub encodes and decodes it).

/// Where the schedule in force for a side came from.
package enum PodScheduleOrigin: String, Sendable, Codable, Hashable, CaseIterable {
    /// The user's manual schedule (wins until cleared).
    case manual
    /// Inferred from the side's past nights.
    case inferred
    /// Too few or too irregular nights: the configured default.
    case `default`
}

/// The full schedule in force for one pod side (power windows and alarm entries).
package struct PodScheduleState: Sendable, Hashable {
    package var podSerial: String
    package var side: BedSide
    package var origin: PodScheduleOrigin
    /// The schedule as the hub encodes it (SleepSchedule's `PodSchedule` in JSON).
    package var scheduleJSON: String
    /// One human line, e.g. "power 22:00→07:30 (Sun–Thu), alarm 07:00 rise 60%".
    package var summary: String
    /// Why this schedule (manual, inferred from n nights, default because …).
    package var reason: String
    package var timeZoneID: String
    /// Unix seconds (hub clock) it became the one in force.
    package var setAt: Int64
    /// Unix seconds the pod last acknowledged every command of this side; nil when not yet.
    package var acknowledgedAt: Int64?

    package init(podSerial: String, side: BedSide, origin: PodScheduleOrigin, scheduleJSON: String, summary: String,
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
package struct ManualScheduleRecord: Sendable, Hashable {
    package var podSerial: String
    package var side: BedSide
    package var weekdayBedtime: String
    package var weekdayWake: String
    package var weekendBedtime: String
    package var weekendWake: String
    package var setAt: Int64

    package init(podSerial: String, side: BedSide, weekdayBedtime: String, weekdayWake: String,
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
package enum PushOutcome: String, Sendable, Codable, Hashable {
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
package struct SchedulePushRecord: Sendable, Hashable {
    package var id: Int64?
    package var podSerial: String
    /// Unix seconds (hub clock) when it was sent.
    package var sentAt: Int64
    /// The command's key: `set-clock`, `set-power-schedule(left)`, `set-alarm(right)`.
    package var command: String
    /// What was sent, for people ("power 22:00→07:30 (Sun–Thu)", "clock UTC−05:00").
    package var description: String
    /// 1 for the first try of a value.
    package var attempt: Int
    package var outcome: PushOutcome
    /// The nack status name (`busy`, `bad value`, …); nil unless `outcome == .nack`.
    package var status: String?
    /// Any further detail (the link error's text).
    package var detail: String?

    package init(id: Int64? = nil, podSerial: String, sentAt: Int64, command: String, description: String,
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
package struct PodEventRecord: Sendable, Hashable {
    package var id: Int64?
    package var podSerial: String
    /// Unix seconds of the event (from the pod's tick and the clock anchor).
    package var at: Int64
    /// `alarm_started`, `alarm_stopped`, `alarm_snoozed`, `alarm_failed`, …
    package var kind: String
    package var side: BedSide?
    package var argument: Int
    package var description: String

    package init(id: Int64? = nil, podSerial: String, at: Int64, kind: String, side: BedSide?, argument: Int,
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

extension NightStore {
    // MARK: Schedule in force

    /// Makes `state` the schedule in force for its pod side. Returns true when the schedule
    /// itself (JSON) or its origin changed; then the acknowledgement is cleared. A changed
    /// reason or summary alone is updated and returns false.
    @discardableResult
    package func setPodSchedule(_ state: PodScheduleState) async throws -> Bool {
        guard !state.podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        return try await write { db in
            typealias C = PodScheduleState.Columns
            let inForce = PodScheduleState.of(podSerial: state.podSerial, side: state.side)
            if let current = try inForce.fetchOne(db),
               current.scheduleJSON == state.scheduleJSON, current.origin == state.origin {
                if current.reason != state.reason || current.summary != state.summary {
                    try inForce.updateAll(db, [C.reason.set(to: state.reason), C.summary.set(to: state.summary)])
                }
                return false
            }
            try PodRecord.upsert(db, serial: state.podSerial, firmware: nil, seenAt: state.setAt)
            try state.insert(db, onConflict: .replace)
            return true
        }
    }

    /// The schedule in force for a pod side, if one was ever computed.
    package func podSchedule(podSerial: String, side: BedSide) async throws -> PodScheduleState? {
        try await read { db in try PodScheduleState.of(podSerial: podSerial, side: side).fetchOne(db) }
    }

    /// Records that the pod acknowledged the whole schedule of a side at `at`.
    package func markPodScheduleAcknowledged(podSerial: String, side: BedSide, at: Int64) async throws {
        try await write { db in
            _ = try PodScheduleState.of(podSerial: podSerial, side: side)
                .updateAll(db, [PodScheduleState.Columns.acknowledgedAt.set(to: at)])
        }
    }

    // MARK: Manual schedule

    /// Sets (or replaces) the user's manual schedule of a side. Times must be `HH:mm`.
    package func setManualSchedule(_ record: ManualScheduleRecord) async throws {
        guard !record.podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        for (name, value) in [("weekday bedtime", record.weekdayBedtime), ("weekday wake", record.weekdayWake),
                              ("weekend bedtime", record.weekendBedtime), ("weekend wake", record.weekendWake)] {
            guard Self.isHHmm(value) else { throw StoreError.invalidSchedule("\(name) must be HH:mm (got \(value))") }
        }
        try await write { db in
            try PodRecord.upsert(db, serial: record.podSerial, firmware: nil, seenAt: record.setAt)
            try record.insert(db, onConflict: .replace)
        }
    }

    /// The manual schedule of a side, nil when none is set (inference applies).
    package func manualSchedule(podSerial: String, side: BedSide) async throws -> ManualScheduleRecord? {
        try await read { db in try ManualScheduleRecord.of(podSerial: podSerial, side: side).fetchOne(db) }
    }

    /// Removes the manual schedule of a side; returns false when there was none.
    @discardableResult
    package func clearManualSchedule(podSerial: String, side: BedSide) async throws -> Bool {
        try await write { db in try ManualScheduleRecord.of(podSerial: podSerial, side: side).deleteAll(db) > 0 }
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
    package func recordSchedulePush(_ push: SchedulePushRecord) async throws -> Int64 {
        guard push.attempt >= 1 else { throw StoreError.invalidSchedule("push attempt must be ≥ 1") }
        return try await write { db in
            try PodRecord.upsert(db, serial: push.podSerial, firmware: nil, seenAt: push.sentAt)
            var push = push
            push.id = nil
            try push.insert(db)
            return db.lastInsertedRowID
        }
    }

    /// Pushes to a pod, oldest first (the last `limit` when given).
    package func schedulePushes(podSerial: String, limit: Int? = nil) async throws -> [SchedulePushRecord] {
        try await read { db in
            try SchedulePushRecord.filter(SchedulePushRecord.Columns.podSerial == podSerial).lastByID(db, limit: limit)
        }
    }

    // MARK: Pod events

    /// Appends an event a pod reported; returns its row id.
    @discardableResult
    package func recordPodEvent(_ event: PodEventRecord) async throws -> Int64 {
        try await write { db in
            try PodRecord.upsert(db, serial: event.podSerial, firmware: nil, seenAt: event.at)
            var event = event
            event.id = nil
            try event.insert(db)
            return db.lastInsertedRowID
        }
    }

    /// Events of a pod in the order they were recorded (the last `limit` when given).
    package func podEvents(podSerial: String, limit: Int? = nil) async throws -> [PodEventRecord] {
        try await read { db in
            try PodEventRecord.filter(PodEventRecord.Columns.podSerial == podSerial).lastByID(db, limit: limit)
        }
    }
}
