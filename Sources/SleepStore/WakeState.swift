import GRDB
import SleepDomain

// Smart wake's state (migration v5): the wake window and "until out of bed" a user set per
// side (they override the configuration's), and one record per side and window of how the
// alarm went. Plain values: the store does not know the SmartWake module's types.

/// A side's smart-wake settings as set through `podbridge schedule set --window` or the API.
package struct WakeSettingsRecord: Sendable, Hashable {
    package var podSerial: String
    package var side: BedSide
    /// 0 = no window (the fixed alarm), else 1…120 minutes before the alarm.
    package var windowMinutes: Int
    /// After the alarm stops, ring again while the side is still occupied.
    package var untilOutOfBed: Bool
    package var setAt: Int64

    package init(podSerial: String, side: BedSide, windowMinutes: Int, untilOutOfBed: Bool, setAt: Int64) {
        self.podSerial = podSerial
        self.side = side
        self.windowMinutes = windowMinutes
        self.untilOutOfBed = untilOutOfBed
        self.setAt = setAt
    }
}

/// How one side's wake went for one window: the window, the decision (when, why, what the
/// live stage, movement and heart rate showed), whether the hub triggered the alarm early,
/// when the pod's alarm actually started, repeats, snoozes and when the side emptied.
package struct WakeRecord: Sendable, Hashable {
    package var id: Int64?
    package var podSerial: String
    package var side: BedSide
    /// The night's wake date (the hub's zone, as sessions), from the window's end.
    package var wakeDate: CalendarDay
    /// Unix seconds.
    package var windowStart: Int64
    package var windowEnd: Int64
    /// 0 for a fixed alarm ("until out of bed" without a window).
    package var windowMinutes: Int
    /// When the decision was made (nil while the window is open).
    package var decidedAt: Int64?
    /// `light_sleep`, `awake_moving`, `arousal`, `window_end`.
    package var reason: String?
    /// The most likely live stage at that moment and its probability.
    package var stage: SleepStage?
    package var stageProbability: Double?
    package var movement: Double?
    package var heartRateRise: Double?
    package var minutesBeforeEnd: Double?
    /// TRIGGER_ALARM was sent and acknowledged.
    package var triggered: Bool
    /// Why an early trigger did not reach the pod (it fires at the end by itself).
    package var triggerError: String?
    /// The first ALARM_STARTED of this wake (unix seconds, the pod's time).
    package var firedAt: Int64?
    /// Alarms the hub triggered again because the side was still occupied.
    package var repeats: Int
    package var snoozes: Int
    /// When the side was found empty after the alarm (unix seconds, data time): the start of
    /// the last empty run that lasted a minute past the alarm; nil again while the sleeper is
    /// back in bed.
    package var outOfBedAt: Int64?
    /// Times the sleeper came back to bed after being seen out of it (a trip to the bathroom
    /// and back to sleep): the wake was not over.
    package var returnsToBed: Int

    package init(id: Int64? = nil, podSerial: String, side: BedSide, wakeDate: CalendarDay, windowStart: Int64,
                windowEnd: Int64, windowMinutes: Int, decidedAt: Int64? = nil, reason: String? = nil,
                stage: SleepStage? = nil, stageProbability: Double? = nil, movement: Double? = nil,
                heartRateRise: Double? = nil, minutesBeforeEnd: Double? = nil, triggered: Bool = false,
                triggerError: String? = nil, firedAt: Int64? = nil, repeats: Int = 0, snoozes: Int = 0,
                outOfBedAt: Int64? = nil, returnsToBed: Int = 0) {
        self.id = id
        self.podSerial = podSerial
        self.side = side
        self.wakeDate = wakeDate
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.windowMinutes = windowMinutes
        self.decidedAt = decidedAt
        self.reason = reason
        self.stage = stage
        self.stageProbability = stageProbability
        self.movement = movement
        self.heartRateRise = heartRateRise
        self.minutesBeforeEnd = minutesBeforeEnd
        self.triggered = triggered
        self.triggerError = triggerError
        self.firedAt = firedAt
        self.repeats = repeats
        self.snoozes = snoozes
        self.outOfBedAt = outOfBedAt
        self.returnsToBed = returnsToBed
    }
}

extension WakeSettingsRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "wake_settings"
    package enum Columns {
        static let podSerial = Column("pod_serial"), side = Column("side"), windowMinutes = Column("window_minutes")
        static let untilOutOfBed = Column("until_out_of_bed"), setAt = Column("set_at")
    }

    package init(row: Row) {
        self.init(podSerial: row[Columns.podSerial], side: BedSide(rawValue: row[Columns.side]) ?? .left,
                  windowMinutes: row[Columns.windowMinutes], untilOutOfBed: row[Columns.untilOutOfBed],
                  setAt: row[Columns.setAt])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.podSerial] = podSerial
        container[Columns.side] = side.rawValue
        container[Columns.windowMinutes] = windowMinutes
        container[Columns.untilOutOfBed] = untilOutOfBed
        container[Columns.setAt] = setAt
    }
}

extension WakeRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "wake_records"
    package enum Columns {
        static let id = Column("id"), podSerial = Column("pod_serial"), side = Column("side")
        static let wakeDate = Column("wake_date"), windowStart = Column("window_start"), windowEnd = Column("window_end")
        static let windowMinutes = Column("window_minutes"), decidedAt = Column("decided_at"), reason = Column("reason")
        static let stage = Column("stage"), stageProbability = Column("stage_probability"), movement = Column("movement")
        static let heartRateRise = Column("heart_rate_rise"), minutesBeforeEnd = Column("minutes_before_end")
        static let triggered = Column("triggered"), triggerError = Column("trigger_error"), firedAt = Column("fired_at")
        static let repeats = Column("repeats"), snoozes = Column("snoozes"), outOfBedAt = Column("out_of_bed_at")
        static let returnsToBed = Column("returns_to_bed")
    }

    /// Throws for a wake date that is no date (the column has no CHECK); the lists pass such a
    /// record over. A stage that is none reads as no stage.
    package init(row: Row) throws {
        guard let day = CalendarDay(row[Columns.wakeDate] as String) else {
            throw StoreError.unreadableRow(table: Self.databaseTableName, reason: "wake date \(row[Columns.wakeDate] as String)")
        }
        self.init(id: row[Columns.id], podSerial: row[Columns.podSerial],
                  side: BedSide(rawValue: row[Columns.side]) ?? .left, wakeDate: day,
                  windowStart: row[Columns.windowStart], windowEnd: row[Columns.windowEnd],
                  windowMinutes: row[Columns.windowMinutes], decidedAt: row[Columns.decidedAt], reason: row[Columns.reason],
                  stage: (row[Columns.stage] as String?).flatMap(SleepStage.init(rawValue:)),
                  stageProbability: row[Columns.stageProbability], movement: row[Columns.movement],
                  heartRateRise: row[Columns.heartRateRise], minutesBeforeEnd: row[Columns.minutesBeforeEnd],
                  triggered: row[Columns.triggered], triggerError: row[Columns.triggerError], firedAt: row[Columns.firedAt],
                  repeats: row[Columns.repeats], snoozes: row[Columns.snoozes], outOfBedAt: row[Columns.outOfBedAt],
                  returnsToBed: row[Columns.returnsToBed])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id
        container[Columns.podSerial] = podSerial
        container[Columns.side] = side.rawValue
        container[Columns.wakeDate] = wakeDate.description
        container[Columns.windowStart] = windowStart
        container[Columns.windowEnd] = windowEnd
        container[Columns.windowMinutes] = windowMinutes
        container[Columns.decidedAt] = decidedAt
        container[Columns.reason] = reason
        container[Columns.stage] = stage?.rawValue
        container[Columns.stageProbability] = stageProbability
        container[Columns.movement] = movement
        container[Columns.heartRateRise] = heartRateRise
        container[Columns.minutesBeforeEnd] = minutesBeforeEnd
        container[Columns.triggered] = triggered
        container[Columns.triggerError] = triggerError
        container[Columns.firedAt] = firedAt
        container[Columns.repeats] = repeats
        container[Columns.snoozes] = snoozes
        container[Columns.outOfBedAt] = outOfBedAt
        container[Columns.returnsToBed] = returnsToBed
    }
}

extension NightStore {
    // MARK: Wake settings

    /// Sets (or replaces) a side's smart-wake settings.
    package func setWakeSettings(_ record: WakeSettingsRecord) async throws {
        guard !record.podSerial.isEmpty else { throw StoreError.invalidSchedule("pod serial is empty") }
        guard (0...120).contains(record.windowMinutes) else {
            throw StoreError.invalidSchedule("a wake window is 0 (off) … 120 minutes, not \(record.windowMinutes)")
        }
        try await write { db in
            try PodRecord.upsert(db, serial: record.podSerial, firmware: nil, seenAt: record.setAt)
            try record.insert(db, onConflict: .replace)
        }
    }

    /// A side's smart-wake settings, nil when none were set (the configuration applies).
    package func wakeSettings(podSerial: String, side: BedSide) async throws -> WakeSettingsRecord? {
        try await read { db in
            try WakeSettingsRecord.of(podSerial: podSerial, side: side).fetchOne(db)
        }
    }

    // MARK: Wake records

    /// Inserts `record`, or replaces the one of the same pod, side and window end. Returns its id.
    @discardableResult
    package func saveWakeRecord(_ record: WakeRecord) async throws -> Int64 {
        try await write { db in
            try PodRecord.upsert(db, serial: record.podSerial, firmware: nil, seenAt: record.windowStart)
            var record = record
            typealias C = WakeRecord.Columns
            // The row's id only: a row whose wake date no longer reads is still the one replaced.
            if let id = try Int64.fetchOne(db, WakeRecord.select(C.id).filter(
                C.podSerial == record.podSerial && C.side == record.side.rawValue && C.windowEnd == record.windowEnd)) {
                record.id = id
                try record.update(db)
                return id
            }
            record.id = nil
            try record.insert(db)
            return db.lastInsertedRowID
        }
    }

    /// Wake records of a wake date (optionally one side), by window end.
    package func wakeRecords(wakeDate: CalendarDay, side: BedSide? = nil) async throws -> [WakeRecord] {
        try await read { db in
            typealias C = WakeRecord.Columns
            var request = WakeRecord.filter(C.wakeDate == wakeDate.description)
            if let side { request = request.filter(C.side == side.rawValue) }
            return try request.order(C.windowEnd).fetchReadable(db)
        }
    }

    /// The wake record of a night that ended at `nightEnd` (Unix seconds): the side's record of
    /// the night's wake date, else the next day's when its window opened before the night ended
    /// (a window ending after midnight, the sleeper up before midnight: the night's wake date is
    /// the day before the alarm's, and its smart wake showed nowhere).
    package func wakeRecord(podSerial: String, side: BedSide, wakeDate: CalendarDay, nightEnd: Int64) async throws -> WakeRecord? {
        if let same = try await wakeRecords(wakeDate: wakeDate, side: side).last(where: { $0.podSerial == podSerial }) {
            return same
        }
        return try await wakeRecords(wakeDate: wakeDate.adding(days: 1), side: side)
            .last { $0.podSerial == podSerial && $0.windowStart <= nightEnd }
    }

    /// Every wake record of a pod, by window end (the last `limit` when given).
    package func wakeRecords(podSerial: String, limit: Int? = nil) async throws -> [WakeRecord] {
        try await read { db in
            typealias C = WakeRecord.Columns
            var request = WakeRecord.filter(C.podSerial == podSerial).order(C.windowEnd.desc)
            if let limit { request = request.limit(limit) }
            return try request.fetchReadable(db).reversed()
        }
    }
}
