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

struct WakeSettingsRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "wake_settings"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case podSerial = "pod_serial", side, windowMinutes = "window_minutes", untilOutOfBed = "until_out_of_bed"
        case setAt = "set_at"
    }

    var podSerial: String
    var side: String
    var windowMinutes: Int
    var untilOutOfBed: Bool
    var setAt: Int64

    init(_ r: WakeSettingsRecord) {
        podSerial = r.podSerial
        side = r.side.rawValue
        windowMinutes = r.windowMinutes
        untilOutOfBed = r.untilOutOfBed
        setAt = r.setAt
    }

    var record: WakeSettingsRecord {
        WakeSettingsRecord(podSerial: podSerial, side: BedSide(rawValue: side) ?? .left, windowMinutes: windowMinutes,
                           untilOutOfBed: untilOutOfBed, setAt: setAt)
    }
}

struct WakeRecordRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "wake_records"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, podSerial = "pod_serial", side, wakeDate = "wake_date", windowStart = "window_start"
        case windowEnd = "window_end", windowMinutes = "window_minutes", decidedAt = "decided_at", reason, stage
        case stageProbability = "stage_probability", movement, heartRateRise = "heart_rate_rise"
        case minutesBeforeEnd = "minutes_before_end", triggered, triggerError = "trigger_error", firedAt = "fired_at"
        case repeats, snoozes, outOfBedAt = "out_of_bed_at", returnsToBed = "returns_to_bed"
    }

    var id: Int64?
    var podSerial: String
    var side: String
    var wakeDate: String
    var windowStart: Int64
    var windowEnd: Int64
    var windowMinutes: Int
    var decidedAt: Int64?
    var reason: String?
    var stage: String?
    var stageProbability: Double?
    var movement: Double?
    var heartRateRise: Double?
    var minutesBeforeEnd: Double?
    var triggered: Bool
    var triggerError: String?
    var firedAt: Int64?
    var repeats: Int
    var snoozes: Int
    var outOfBedAt: Int64?
    var returnsToBed: Int

    init(_ r: WakeRecord) {
        id = r.id
        podSerial = r.podSerial
        side = r.side.rawValue
        wakeDate = r.wakeDate.description
        windowStart = r.windowStart
        windowEnd = r.windowEnd
        windowMinutes = r.windowMinutes
        decidedAt = r.decidedAt
        reason = r.reason
        stage = r.stage?.rawValue
        stageProbability = r.stageProbability
        movement = r.movement
        heartRateRise = r.heartRateRise
        minutesBeforeEnd = r.minutesBeforeEnd
        triggered = r.triggered
        triggerError = r.triggerError
        firedAt = r.firedAt
        repeats = r.repeats
        snoozes = r.snoozes
        outOfBedAt = r.outOfBedAt
        returnsToBed = r.returnsToBed
    }

    var record: WakeRecord? {
        guard let day = CalendarDay(wakeDate) else { return nil }
        return WakeRecord(id: id, podSerial: podSerial, side: BedSide(rawValue: side) ?? .left, wakeDate: day,
                          windowStart: windowStart, windowEnd: windowEnd, windowMinutes: windowMinutes,
                          decidedAt: decidedAt, reason: reason, stage: stage.flatMap(SleepStage.init(rawValue:)),
                          stageProbability: stageProbability, movement: movement, heartRateRise: heartRateRise,
                          minutesBeforeEnd: minutesBeforeEnd, triggered: triggered, triggerError: triggerError,
                          firedAt: firedAt, repeats: repeats, snoozes: snoozes, outOfBedAt: outOfBedAt,
                          returnsToBed: returnsToBed)
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
            try PodRow.upsert(db, serial: record.podSerial, firmware: nil, seenAt: record.setAt)
            try WakeSettingsRow(record).insert(db, onConflict: .replace)
        }
    }

    /// A side's smart-wake settings, nil when none were set (the configuration applies).
    package func wakeSettings(podSerial: String, side: BedSide) async throws -> WakeSettingsRecord? {
        try await read { db in
            try WakeSettingsRow.filter(WakeSettingsRow.Columns.podSerial == podSerial
                                       && WakeSettingsRow.Columns.side == side.rawValue).fetchOne(db)?.record
        }
    }

    // MARK: Wake records

    /// Inserts `record`, or replaces the one of the same pod, side and window end. Returns its id.
    @discardableResult
    package func saveWakeRecord(_ record: WakeRecord) async throws -> Int64 {
        try await write { db in
            try PodRow.upsert(db, serial: record.podSerial, firmware: nil, seenAt: record.windowStart)
            var row = WakeRecordRow(record)
            typealias C = WakeRecordRow.Columns
            if let existing = try WakeRecordRow.filter(C.podSerial == record.podSerial && C.side == record.side.rawValue
                                                       && C.windowEnd == record.windowEnd).fetchOne(db) {
                row.id = existing.id
                try row.update(db)
                return existing.id ?? 0
            }
            row.id = nil
            try row.insert(db)
            return db.lastInsertedRowID
        }
    }

    /// Wake records of a wake date (optionally one side), by window end.
    package func wakeRecords(wakeDate: CalendarDay, side: BedSide? = nil) async throws -> [WakeRecord] {
        try await read { db in
            typealias C = WakeRecordRow.Columns
            var request = WakeRecordRow.filter(C.wakeDate == wakeDate.description)
            if let side { request = request.filter(C.side == side.rawValue) }
            return try request.order(C.windowEnd).fetchAll(db).compactMap(\.record)
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
            typealias C = WakeRecordRow.Columns
            var request = WakeRecordRow.filter(C.podSerial == podSerial).order(C.windowEnd.desc)
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db).reversed().compactMap(\.record)
        }
    }
}
