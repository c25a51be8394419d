import GRDB
import SleepDomain

// The store's tables as GRDB records: one type per table, its columns named once (the
// `CodingKeys`, which are also its query `Columns`), and one conversion to and from the
// public value types. Enumerations from SleepDomain are stored as their raw text; the
// tables' CHECK constraints keep that text valid.

// MARK: pods

struct PodRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "pods"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case serial, firmware, firstSeen = "first_seen", lastSeen = "last_seen"
    }

    var serial: String
    var firmware: String?
    var firstSeen: Int64
    var lastSeen: Int64

    var record: PodRecord { PodRecord(serial: serial, firmware: firmware, firstSeen: firstSeen, lastSeen: lastSeen) }

    /// Inserts the pod, or widens its seen span (and replaces its firmware when known).
    static func upsert(_ db: Database, serial: String, firmware: String?, seenAt: Int64) throws {
        _ = try PodRow(serial: serial, firmware: firmware, firstSeen: seenAt, lastSeen: seenAt).upsertAndFetch(
            db, onConflict: [Columns.serial.name]
        ) { excluded in
            [
                Columns.firmware.set(to: coalesce([excluded[Columns.firmware], Columns.firmware] as [any SQLSpecificExpressible])),
                Columns.firstSeen.set(to: SQL("min(\(Columns.firstSeen), \(excluded[Columns.firstSeen]))")),
                Columns.lastSeen.set(to: SQL("max(\(Columns.lastSeen), \(excluded[Columns.lastSeen]))")),
            ]
        }
    }
}

// MARK: sessions

struct SessionRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "sessions"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, sourceID = "source_id", podSerial = "pod_serial", side
        case startTime = "start_time", endTime = "end_time", wakeDate = "wake_date", timeZone = "time_zone"
        case isFinal = "is_final"
        case timeInBed = "time_in_bed_min", totalSleep = "total_sleep_min", efficiency
        case onsetLatency = "onset_latency_min", waso = "waso_min", awakenings
        case awake = "awake_min", core = "core_min", deep = "deep_min", rem = "rem_min"
        case awakePercent = "awake_pct", corePercent = "core_pct", deepPercent = "deep_pct", remPercent = "rem_pct"
        case meanHeartRate = "mean_hr", meanHRV = "mean_hrv", meanBreathingRate = "mean_br"
        case score, analyzedAt = "analyzed_at", syncStatus = "sync_status"
        case backendSessionID = "backend_session_id", syncError = "sync_error"
    }

    var id: Int64?
    var sourceID: String
    var podSerial: String
    var side: String
    var startTime: Int64
    var endTime: Int64
    var wakeDate: String
    var timeZone: String
    var isFinal: Bool
    var timeInBed: Double
    var totalSleep: Double
    var efficiency: Double
    var onsetLatency: Double
    var waso: Double
    var awakenings: Int
    var awake: Double
    var core: Double
    var deep: Double
    var rem: Double
    var awakePercent: Double
    var corePercent: Double
    var deepPercent: Double
    var remPercent: Double
    var meanHeartRate: Double?
    var meanHRV: Double?
    var meanBreathingRate: Double?
    var score: Int
    var analyzedAt: Int64
    var syncStatus: String
    var backendSessionID: String?
    var syncError: String?

    /// A new row for `night` (no row id, no backend id, no error).
    init(_ night: NightRecord, wakeDate: CalendarDay, timeZoneID: String, analyzedAt: Int64, syncStatus: SyncStatus) {
        let m = night.metrics
        id = nil
        sourceID = night.sourceID
        podSerial = night.podSerial
        side = night.side.rawValue
        startTime = night.start
        endTime = night.end
        self.wakeDate = wakeDate.description
        timeZone = timeZoneID
        isFinal = night.isFinal
        timeInBed = m.timeInBedMinutes
        totalSleep = m.totalSleepMinutes
        efficiency = m.efficiency
        onsetLatency = m.onsetLatencyMinutes
        waso = m.wasoMinutes
        awakenings = m.awakenings
        awake = m.awakeMinutes
        core = m.coreMinutes
        deep = m.deepMinutes
        rem = m.remMinutes
        awakePercent = m.awakePercent
        corePercent = m.corePercent
        deepPercent = m.deepPercent
        remPercent = m.remPercent
        meanHeartRate = m.meanHeartRate
        meanHRV = m.meanHRV
        meanBreathingRate = m.meanBreathingRate
        score = m.score
        self.analyzedAt = analyzedAt
        self.syncStatus = syncStatus.rawValue
        backendSessionID = nil
        syncError = nil
    }

    var session: StoredSession {
        StoredSession(
            id: id ?? 0, sourceID: sourceID, podSerial: podSerial, side: BedSide(rawValue: side) ?? .left,
            start: startTime, end: endTime,
            wakeDate: CalendarDay(wakeDate) ?? CalendarDay(year: 1970, month: 1, day: 1)!,
            timeZoneID: timeZone, isFinal: isFinal,
            metrics: NightMetrics(
                timeInBedMinutes: timeInBed, totalSleepMinutes: totalSleep, efficiency: efficiency,
                onsetLatencyMinutes: onsetLatency, wasoMinutes: waso, awakenings: awakenings,
                awakeMinutes: awake, coreMinutes: core, deepMinutes: deep, remMinutes: rem,
                awakePercent: awakePercent, corePercent: corePercent, deepPercent: deepPercent, remPercent: remPercent,
                meanHeartRate: meanHeartRate, meanHRV: meanHRV, meanBreathingRate: meanBreathingRate, score: score),
            analyzedAt: analyzedAt, syncStatus: SyncStatus(rawValue: syncStatus) ?? .pending,
            backendSessionID: backendSessionID, syncError: syncError)
    }

    /// Sessions of `side` (all sides when nil), oldest first.
    static func ordered(side: BedSide?) -> QueryInterfaceRequest<SessionRow> {
        var request = SessionRow.order(Columns.endTime, Columns.side)
        if let side { request = request.filter(Columns.side == side.rawValue) }
        return request
    }
}

// MARK: epochs

struct EpochRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "epochs"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case sessionID = "session_id", startTime = "start_time", stage
        case pAwake = "p_awake", pCore = "p_core", pDeep = "p_deep", pRem = "p_rem"
        case heartRate = "heart_rate", hrvRMSSD = "hrv_rmssd", breathingRate = "breathing_rate", movement
    }

    var sessionID: Int64
    var startTime: Int64
    var stage: String
    var pAwake: Double?
    var pCore: Double?
    var pDeep: Double?
    var pRem: Double?
    var heartRate: Double?
    var hrvRMSSD: Double?
    var breathingRate: Double?
    var movement: Double?

    init(sessionID: Int64, _ e: EpochRecord) {
        self.sessionID = sessionID
        startTime = e.start
        stage = e.stage.rawValue
        pAwake = e.probabilities?.awake
        pCore = e.probabilities?.core
        pDeep = e.probabilities?.deep
        pRem = e.probabilities?.rem
        heartRate = e.heartRate
        hrvRMSSD = e.hrvRMSSD
        breathingRate = e.breathingRate
        movement = e.movement
    }

    var record: EpochRecord? {
        guard let stage = SleepStage(rawValue: stage) else { return nil }
        var probabilities: StageProbabilities?
        if let pAwake, let pCore, let pDeep, let pRem {
            probabilities = StageProbabilities(awake: pAwake, core: pCore, deep: pDeep, rem: pRem)
        }
        return EpochRecord(start: startTime, stage: stage, probabilities: probabilities, heartRate: heartRate,
                           hrvRMSSD: hrvRMSSD, breathingRate: breathingRate, movement: movement)
    }
}

// MARK: stage_blocks

struct StageBlockRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "stage_blocks"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, sessionID = "session_id", stage, healthValue = "health_value"
        case startTime = "start_time", endTime = "end_time"
    }

    var id: Int64?
    var sessionID: Int64
    var stage: String
    var healthValue: Int
    var startTime: Int64
    var endTime: Int64

    init(sessionID: Int64, _ b: StageBlock) {
        id = nil
        self.sessionID = sessionID
        stage = b.stage.rawValue
        healthValue = b.stage.healthValue
        startTime = b.start
        endTime = b.end
    }

    var block: StageBlock? { SleepCategory(rawValue: stage).map { StageBlock(stage: $0, start: startTime, end: endTime) } }

    /// A session's blocks: the `in_bed` block first, then stages in time order.
    static func blocks(_ db: Database, sessionID: Int64) throws -> [StageBlock] {
        try StageBlockRow
            .filter(Columns.sessionID == sessionID)
            .order(Columns.stage != SleepCategory.inBed.rawValue, Columns.startTime)
            .fetchAll(db).compactMap(\.block)
    }
}

// MARK: outbox

struct OutboxRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "outbox"
    static let session = belongsTo(SessionRow.self)
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, sessionID = "session_id", eventType = "event_type", status, attempts
        case nextAttemptAt = "next_attempt_at", lastError = "last_error"
        case claimToken = "claim_token", claimedUntil = "claimed_until"
        case createdAt = "created_at", updatedAt = "updated_at"
    }

    var id: Int64?
    var sessionID: Int64
    var eventType: String
    var status: String
    var attempts: Int
    var nextAttemptAt: Int64
    var lastError: String?
    var claimToken: String?
    var claimedUntil: Int64?
    var createdAt: Int64
    var updatedAt: Int64

    static let sleepSessionEvent = "sleep_session"
}

// MARK: schedule state (v3)

struct PodScheduleRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "pod_schedule"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case podSerial = "pod_serial", side, origin, scheduleJSON = "schedule_json", summary, reason
        case timeZone = "time_zone", setAt = "set_at", acknowledgedAt = "acknowledged_at"
    }

    var podSerial: String
    var side: String
    var origin: String
    var scheduleJSON: String
    var summary: String
    var reason: String
    var timeZone: String
    var setAt: Int64
    var acknowledgedAt: Int64?

    init(_ s: PodScheduleState) {
        podSerial = s.podSerial
        side = s.side.rawValue
        origin = s.origin.rawValue
        scheduleJSON = s.scheduleJSON
        summary = s.summary
        reason = s.reason
        timeZone = s.timeZoneID
        setAt = s.setAt
        acknowledgedAt = s.acknowledgedAt
    }

    var state: PodScheduleState {
        PodScheduleState(
            podSerial: podSerial, side: BedSide(rawValue: side) ?? .left,
            origin: PodScheduleOrigin(rawValue: origin) ?? .default, scheduleJSON: scheduleJSON, summary: summary,
            reason: reason, timeZoneID: timeZone, setAt: setAt, acknowledgedAt: acknowledgedAt)
    }

    static func of(podSerial: String, side: BedSide) -> QueryInterfaceRequest<PodScheduleRow> {
        PodScheduleRow.filter(Columns.podSerial == podSerial && Columns.side == side.rawValue)
    }
}

struct ManualScheduleRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "manual_schedule"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case podSerial = "pod_serial", side, weekdayBedtime = "weekday_bedtime", weekdayWake = "weekday_wake"
        case weekendBedtime = "weekend_bedtime", weekendWake = "weekend_wake", setAt = "set_at"
    }

    var podSerial: String
    var side: String
    var weekdayBedtime: String
    var weekdayWake: String
    var weekendBedtime: String
    var weekendWake: String
    var setAt: Int64

    init(_ r: ManualScheduleRecord) {
        podSerial = r.podSerial
        side = r.side.rawValue
        weekdayBedtime = r.weekdayBedtime
        weekdayWake = r.weekdayWake
        weekendBedtime = r.weekendBedtime
        weekendWake = r.weekendWake
        setAt = r.setAt
    }

    var record: ManualScheduleRecord {
        ManualScheduleRecord(
            podSerial: podSerial, side: BedSide(rawValue: side) ?? .left, weekdayBedtime: weekdayBedtime,
            weekdayWake: weekdayWake, weekendBedtime: weekendBedtime, weekendWake: weekendWake, setAt: setAt)
    }

    static func of(podSerial: String, side: BedSide) -> QueryInterfaceRequest<ManualScheduleRow> {
        ManualScheduleRow.filter(Columns.podSerial == podSerial && Columns.side == side.rawValue)
    }
}

struct SchedulePushRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "schedule_pushes"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, podSerial = "pod_serial", sentAt = "sent_at", command, description, attempt, outcome, status, detail
    }

    var id: Int64?
    var podSerial: String
    var sentAt: Int64
    var command: String
    var description: String
    var attempt: Int
    var outcome: String
    var status: String?
    var detail: String?

    init(_ p: SchedulePushRecord) {
        id = nil
        podSerial = p.podSerial
        sentAt = p.sentAt
        command = p.command
        description = p.description
        attempt = p.attempt
        outcome = p.outcome.rawValue
        status = p.status
        detail = p.detail
    }

    var record: SchedulePushRecord {
        SchedulePushRecord(
            id: id, podSerial: podSerial, sentAt: sentAt, command: command, description: description, attempt: attempt,
            outcome: PushOutcome(rawValue: outcome) ?? .timeout, status: status, detail: detail)
    }
}

struct PodEventRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "pod_events"
    typealias Columns = CodingKeys
    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, podSerial = "pod_serial", at, kind, side, argument, description
    }

    var id: Int64?
    var podSerial: String
    var at: Int64
    var kind: String
    var side: String?
    var argument: Int
    var description: String

    init(_ e: PodEventRecord) {
        id = nil
        podSerial = e.podSerial
        at = e.at
        kind = e.kind
        side = e.side?.rawValue
        argument = e.argument
        description = e.description
    }

    var record: PodEventRecord {
        PodEventRecord(id: id, podSerial: podSerial, at: at, kind: kind, side: side.flatMap(BedSide.init(rawValue:)),
                       argument: argument, description: description)
    }
}

extension QueryInterfaceRequest {
    /// The last `limit` rows by id (all when nil), oldest first.
    func lastByID(_ db: Database, limit: Int?) throws -> [RowDecoder]
    where RowDecoder: FetchableRecord & TableRecord {
        var request = order(Column("id").desc)
        if let limit { request = request.limit(limit) }
        return try request.fetchAll(db).reversed()
    }
}
