import GRDB
import SleepDomain

// The store's records are its rows: each value type the store takes and gives back conforms
// to GRDB's record protocols here, with its table, its columns (`Columns`, named once) and
// its own `init(row:)` and `encode(to:)`, so there is one type per stored fact and no copy of
// it field by field. Enumerations from SleepDomain are stored as their raw text (the tables'
// CHECK constraints keep that text valid); a value unreadable anyway (text no CHECK guards)
// reads as the same default it always did. Every column is written, nil as NULL, so an update
// clears what the value no longer has.

// MARK: pods

extension PodRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "pods"
    package enum Columns {
        static let serial = Column("serial"), firmware = Column("firmware")
        static let firstSeen = Column("first_seen"), lastSeen = Column("last_seen")
    }

    package init(row: Row) {
        self.init(serial: row[Columns.serial], firmware: row[Columns.firmware], firstSeen: row[Columns.firstSeen],
                  lastSeen: row[Columns.lastSeen])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.serial] = serial
        container[Columns.firmware] = firmware
        container[Columns.firstSeen] = firstSeen
        container[Columns.lastSeen] = lastSeen
    }

    /// Inserts the pod, or widens its seen span (and replaces its firmware when known).
    static func upsert(_ db: Database, serial: String, firmware: String?, seenAt: Int64) throws {
        _ = try PodRecord(serial: serial, firmware: firmware, firstSeen: seenAt, lastSeen: seenAt).upsertAndFetch(
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

extension StoredSession: FetchableRecord, MutablePersistableRecord {
    package static let databaseTableName = "sessions"
    package enum Columns {
        static let id = Column("id"), sourceID = Column("source_id"), podSerial = Column("pod_serial")
        static let side = Column("side"), startTime = Column("start_time"), endTime = Column("end_time")
        static let wakeDate = Column("wake_date"), timeZone = Column("time_zone"), isFinal = Column("is_final")
        static let timeInBed = Column("time_in_bed_min"), totalSleep = Column("total_sleep_min")
        static let efficiency = Column("efficiency"), onsetLatency = Column("onset_latency_min")
        static let waso = Column("waso_min"), awakenings = Column("awakenings")
        static let awake = Column("awake_min"), core = Column("core_min"), deep = Column("deep_min"), rem = Column("rem_min")
        static let awakePercent = Column("awake_pct"), corePercent = Column("core_pct")
        static let deepPercent = Column("deep_pct"), remPercent = Column("rem_pct")
        static let meanHeartRate = Column("mean_hr"), meanHRV = Column("mean_hrv"), meanBreathingRate = Column("mean_br")
        static let score = Column("score"), analyzedAt = Column("analyzed_at"), syncStatus = Column("sync_status")
        static let backendSessionID = Column("backend_session_id"), syncError = Column("sync_error")
    }

    /// A session for `night`, not stored yet (id 0: SQLite assigns it on insert), with no
    /// backend id and no error.
    init(_ night: NightRecord, wakeDate: CalendarDay, timeZoneID: String, analyzedAt: Int64, syncStatus: SyncStatus) {
        self.init(id: 0, sourceID: night.sourceID, podSerial: night.podSerial, side: night.side, start: night.start,
                  end: night.end, wakeDate: wakeDate, timeZoneID: timeZoneID, isFinal: night.isFinal,
                  metrics: night.metrics, analyzedAt: analyzedAt, syncStatus: syncStatus, backendSessionID: nil,
                  syncError: nil)
    }

    package init(row: Row) {
        self.init(
            id: row[Columns.id], sourceID: row[Columns.sourceID], podSerial: row[Columns.podSerial],
            side: BedSide(rawValue: row[Columns.side]) ?? .left, start: row[Columns.startTime], end: row[Columns.endTime],
            wakeDate: CalendarDay(row[Columns.wakeDate] as String) ?? CalendarDay(year: 1970, month: 1, day: 1)!,
            timeZoneID: row[Columns.timeZone], isFinal: row[Columns.isFinal],
            metrics: NightMetrics(
                timeInBedMinutes: row[Columns.timeInBed], totalSleepMinutes: row[Columns.totalSleep],
                efficiency: row[Columns.efficiency], onsetLatencyMinutes: row[Columns.onsetLatency],
                wasoMinutes: row[Columns.waso], awakenings: row[Columns.awakenings], awakeMinutes: row[Columns.awake],
                coreMinutes: row[Columns.core], deepMinutes: row[Columns.deep], remMinutes: row[Columns.rem],
                awakePercent: row[Columns.awakePercent], corePercent: row[Columns.corePercent],
                deepPercent: row[Columns.deepPercent], remPercent: row[Columns.remPercent],
                meanHeartRate: row[Columns.meanHeartRate], meanHRV: row[Columns.meanHRV],
                meanBreathingRate: row[Columns.meanBreathingRate], score: row[Columns.score]),
            analyzedAt: row[Columns.analyzedAt],
            syncStatus: SyncStatus(rawValue: row[Columns.syncStatus]) ?? .pending,
            backendSessionID: row[Columns.backendSessionID], syncError: row[Columns.syncError])
    }

    package func encode(to container: inout PersistenceContainer) {
        // 0 is no row id (AUTOINCREMENT starts at 1): NULL, so that SQLite assigns one.
        container[Columns.id] = id == 0 ? nil : id
        container[Columns.sourceID] = sourceID
        container[Columns.podSerial] = podSerial
        container[Columns.side] = side.rawValue
        container[Columns.startTime] = start
        container[Columns.endTime] = end
        container[Columns.wakeDate] = wakeDate.description
        container[Columns.timeZone] = timeZoneID
        container[Columns.isFinal] = isFinal
        container[Columns.timeInBed] = metrics.timeInBedMinutes
        container[Columns.totalSleep] = metrics.totalSleepMinutes
        container[Columns.efficiency] = metrics.efficiency
        container[Columns.onsetLatency] = metrics.onsetLatencyMinutes
        container[Columns.waso] = metrics.wasoMinutes
        container[Columns.awakenings] = metrics.awakenings
        container[Columns.awake] = metrics.awakeMinutes
        container[Columns.core] = metrics.coreMinutes
        container[Columns.deep] = metrics.deepMinutes
        container[Columns.rem] = metrics.remMinutes
        container[Columns.awakePercent] = metrics.awakePercent
        container[Columns.corePercent] = metrics.corePercent
        container[Columns.deepPercent] = metrics.deepPercent
        container[Columns.remPercent] = metrics.remPercent
        container[Columns.meanHeartRate] = metrics.meanHeartRate
        container[Columns.meanHRV] = metrics.meanHRV
        container[Columns.meanBreathingRate] = metrics.meanBreathingRate
        container[Columns.score] = metrics.score
        container[Columns.analyzedAt] = analyzedAt
        container[Columns.syncStatus] = syncStatus.rawValue
        container[Columns.backendSessionID] = backendSessionID
        container[Columns.syncError] = syncError
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    /// Sessions of `side` (all sides when nil), oldest first.
    static func ordered(side: BedSide?) -> QueryInterfaceRequest<StoredSession> {
        var request = StoredSession.order(Columns.endTime, Columns.side)
        if let side { request = request.filter(Columns.side == side.rawValue) }
        return request
    }
}

/// A row of a table that belongs to a session (`epochs`, `stage_blocks`) as it is written: the
/// record with the id of its session. The records themselves carry no session id: the
/// session they are read for, or written with, holds it.
struct OfSession<Record: EncodableRecord & TableRecord>: PersistableRecord {
    static var databaseTableName: String { Record.databaseTableName }
    var sessionID: Int64
    var record: Record

    func encode(to container: inout PersistenceContainer) throws {
        try record.encode(to: &container)
        container["session_id"] = sessionID
    }
}

// MARK: epochs

extension EpochRecord: FetchableRecord, TableRecord, EncodableRecord {
    package static let databaseTableName = "epochs"
    package enum Columns {
        static let sessionID = Column("session_id"), startTime = Column("start_time"), stage = Column("stage")
        static let pAwake = Column("p_awake"), pCore = Column("p_core"), pDeep = Column("p_deep"), pRem = Column("p_rem")
        static let heartRate = Column("heart_rate"), hrvRMSSD = Column("hrv_rmssd")
        static let breathingRate = Column("breathing_rate"), movement = Column("movement")
    }

    /// Throws for a stage the table's CHECK does not allow.
    package init(row: Row) throws {
        guard let stage = SleepStage(rawValue: row[Columns.stage]) else {
            throw StoreError.unreadableRow(table: Self.databaseTableName, reason: "stage \(row[Columns.stage] as String)")
        }
        var probabilities: StageProbabilities?
        if let awake: Double = row[Columns.pAwake], let core: Double = row[Columns.pCore],
           let deep: Double = row[Columns.pDeep], let rem: Double = row[Columns.pRem] {
            probabilities = StageProbabilities(awake: awake, core: core, deep: deep, rem: rem)
        }
        self.init(start: row[Columns.startTime], stage: stage, probabilities: probabilities,
                  heartRate: row[Columns.heartRate], hrvRMSSD: row[Columns.hrvRMSSD],
                  breathingRate: row[Columns.breathingRate], movement: row[Columns.movement])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.startTime] = start
        container[Columns.stage] = stage.rawValue
        container[Columns.pAwake] = probabilities?.awake
        container[Columns.pCore] = probabilities?.core
        container[Columns.pDeep] = probabilities?.deep
        container[Columns.pRem] = probabilities?.rem
        container[Columns.heartRate] = heartRate
        container[Columns.hrvRMSSD] = hrvRMSSD
        container[Columns.breathingRate] = breathingRate
        container[Columns.movement] = movement
    }
}

// MARK: stage_blocks

extension StageBlock: FetchableRecord, TableRecord, EncodableRecord {
    package static let databaseTableName = "stage_blocks"
    /// `id` (AUTOINCREMENT) only orders and keys the rows; a block is its stage and span.
    package enum Columns {
        static let id = Column("id"), sessionID = Column("session_id"), stage = Column("stage")
        static let healthValue = Column("health_value"), startTime = Column("start_time"), endTime = Column("end_time")
    }

    /// Throws for a stage the table's CHECK does not allow.
    package init(row: Row) throws {
        guard let stage = SleepCategory(rawValue: row[Columns.stage]) else {
            throw StoreError.unreadableRow(table: Self.databaseTableName, reason: "stage \(row[Columns.stage] as String)")
        }
        self.init(stage: stage, start: row[Columns.startTime], end: row[Columns.endTime])
    }

    /// The Apple Health value is written with the stage it follows from (v2's column).
    package func encode(to container: inout PersistenceContainer) {
        container[Columns.stage] = stage.rawValue
        container[Columns.healthValue] = stage.healthValue
        container[Columns.startTime] = start
        container[Columns.endTime] = end
    }

    /// A session's blocks: the `in_bed` block first, then stages in time order.
    static func blocks(_ db: Database, sessionID: Int64) throws -> [StageBlock] {
        try StageBlock
            .filter(Columns.sessionID == sessionID)
            .order(Columns.stage != SleepCategory.inBed.rawValue, Columns.startTime)
            .fetchReadable(db)
    }
}

// MARK: schedule state (v3)

extension PodScheduleState: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "pod_schedule"
    package enum Columns {
        static let podSerial = Column("pod_serial"), side = Column("side"), origin = Column("origin")
        static let scheduleJSON = Column("schedule_json"), summary = Column("summary"), reason = Column("reason")
        static let timeZone = Column("time_zone"), setAt = Column("set_at"), acknowledgedAt = Column("acknowledged_at")
    }

    package init(row: Row) {
        self.init(podSerial: row[Columns.podSerial], side: BedSide(rawValue: row[Columns.side]) ?? .left,
                  origin: PodScheduleOrigin(rawValue: row[Columns.origin]) ?? .default,
                  scheduleJSON: row[Columns.scheduleJSON], summary: row[Columns.summary], reason: row[Columns.reason],
                  timeZoneID: row[Columns.timeZone], setAt: row[Columns.setAt], acknowledgedAt: row[Columns.acknowledgedAt])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.podSerial] = podSerial
        container[Columns.side] = side.rawValue
        container[Columns.origin] = origin.rawValue
        container[Columns.scheduleJSON] = scheduleJSON
        container[Columns.summary] = summary
        container[Columns.reason] = reason
        container[Columns.timeZone] = timeZoneID
        container[Columns.setAt] = setAt
        container[Columns.acknowledgedAt] = acknowledgedAt
    }
}

extension ManualScheduleRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "manual_schedule"
    package enum Columns {
        static let podSerial = Column("pod_serial"), side = Column("side")
        static let weekdayBedtime = Column("weekday_bedtime"), weekdayWake = Column("weekday_wake")
        static let weekendBedtime = Column("weekend_bedtime"), weekendWake = Column("weekend_wake")
        static let setAt = Column("set_at")
    }

    package init(row: Row) {
        self.init(podSerial: row[Columns.podSerial], side: BedSide(rawValue: row[Columns.side]) ?? .left,
                  weekdayBedtime: row[Columns.weekdayBedtime], weekdayWake: row[Columns.weekdayWake],
                  weekendBedtime: row[Columns.weekendBedtime], weekendWake: row[Columns.weekendWake],
                  setAt: row[Columns.setAt])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.podSerial] = podSerial
        container[Columns.side] = side.rawValue
        container[Columns.weekdayBedtime] = weekdayBedtime
        container[Columns.weekdayWake] = weekdayWake
        container[Columns.weekendBedtime] = weekendBedtime
        container[Columns.weekendWake] = weekendWake
        container[Columns.setAt] = setAt
    }
}

extension SchedulePushRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "schedule_pushes"
    package enum Columns {
        static let id = Column("id"), podSerial = Column("pod_serial"), sentAt = Column("sent_at")
        static let command = Column("command"), description = Column("description"), attempt = Column("attempt")
        static let outcome = Column("outcome"), status = Column("status"), detail = Column("detail")
    }

    package init(row: Row) {
        self.init(id: row[Columns.id], podSerial: row[Columns.podSerial], sentAt: row[Columns.sentAt],
                  command: row[Columns.command], description: row[Columns.description], attempt: row[Columns.attempt],
                  outcome: PushOutcome(rawValue: row[Columns.outcome]) ?? .timeout, status: row[Columns.status],
                  detail: row[Columns.detail])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id
        container[Columns.podSerial] = podSerial
        container[Columns.sentAt] = sentAt
        container[Columns.command] = command
        container[Columns.description] = description
        container[Columns.attempt] = attempt
        container[Columns.outcome] = outcome.rawValue
        container[Columns.status] = status
        container[Columns.detail] = detail
    }
}

extension PodEventRecord: FetchableRecord, PersistableRecord {
    package static let databaseTableName = "pod_events"
    package enum Columns {
        static let id = Column("id"), podSerial = Column("pod_serial"), at = Column("at"), kind = Column("kind")
        static let side = Column("side"), argument = Column("argument"), description = Column("description")
    }

    package init(row: Row) {
        self.init(id: row[Columns.id], podSerial: row[Columns.podSerial], at: row[Columns.at], kind: row[Columns.kind],
                  side: (row[Columns.side] as String?).flatMap(BedSide.init(rawValue:)), argument: row[Columns.argument],
                  description: row[Columns.description])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = id
        container[Columns.podSerial] = podSerial
        container[Columns.at] = at
        container[Columns.kind] = kind
        container[Columns.side] = side?.rawValue
        container[Columns.argument] = argument
        container[Columns.description] = description
    }
}

extension TableRecord {
    /// The row of one pod side, in a table keyed by pod serial and side (`pod_schedule`,
    /// `manual_schedule`, `wake_settings`, `alarm_switches`, `open_stays`, `presence_power_sides`).
    static func of(podSerial: String, side: BedSide) -> QueryInterfaceRequest<Self> {
        filter(Column("pod_serial") == podSerial && Column("side") == side.rawValue)
    }
}

extension QueryInterfaceRequest where RowDecoder: FetchableRecord {
    /// The rows that read as records; one that does not (`StoreError.unreadableRow`) is passed
    /// over, as the store always did with them.
    func fetchReadable(_ db: Database) throws -> [RowDecoder] {
        try Row.fetchAll(db, self).compactMap { try? RowDecoder(row: $0) }
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
