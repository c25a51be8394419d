import Foundation
import GRDB
import SleepDomain

/// The hub's SQLite store: one file in WAL mode with foreign keys on, migrated on open.
///
/// All writes that belong together run in one transaction (a session, its epochs, its
/// stage blocks and its outbox event), so a crash or an error never leaves half a night.
/// Safe to share between tasks and threads; several processes may open the same file.
public final class SleepStore: Sendable {
    /// Path of the database file.
    public let path: String
    /// Zone in which wake dates are attributed when sessions are saved.
    public let timeZone: TimeZone
    public let clock: any WallClock
    let pool: DatabasePool
    let calendar: LocalCalendar

    /// Opens (creating if needed) and migrates the database at `path`.
    /// - Throws: `StoreError.newerSchema` for a file written by a newer podbridge.
    public init(path: String, timeZone: TimeZone = .current, clock: any WallClock = SystemClock()) throws {
        self.path = path
        self.timeZone = timeZone
        self.clock = clock
        self.calendar = LocalCalendar(timeZone: timeZone)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // Writers wait for each other (another process, or the worker) instead of failing.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // In WAL mode NORMAL keeps every committed transaction across a process crash
            // (kill -9); only an OS crash or power loss may drop the last commits.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        let migrator = StoreMigrations.migrator
        let unknown = try pool.read { db in
            try migrator.appliedIdentifiers(db).subtracting(StoreMigrations.versions)
        }
        guard unknown.isEmpty else { throw StoreError.newerSchema(unknown: unknown.sorted()) }
        try migrator.migrate(pool)
    }

    /// Opens an existing database only; a missing file is an error instead of a new empty store.
    public static func openExisting(path: String, timeZone: TimeZone = .current, clock: any WallClock = SystemClock()) throws -> SleepStore {
        guard FileManager.default.fileExists(atPath: path) else { throw StoreError.missingDatabase(path: path) }
        return try SleepStore(path: path, timeZone: timeZone, clock: clock)
    }

    /// Migration identifiers applied to this database, oldest first.
    public func appliedMigrations() throws -> [String] {
        try pool.read { db in try StoreMigrations.migrator.appliedMigrations(db) }
    }

    /// Result of `PRAGMA integrity_check` (`["ok"]` for a sound file).
    public func integrityCheck() throws -> [String] {
        try pool.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// The SQLite journal mode in use (`wal`).
    public func journalMode() throws -> String {
        try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }

    /// Closes the file; the store must not be used afterwards.
    public func close() throws { try pool.close() }

    // MARK: Pods

    /// Records that a pod was seen (its firmware, when known, replaces the stored one).
    public func recordPod(serial: String, firmware: String?, seenAt: Int64) throws {
        try pool.write { db in try Self.upsertPod(db, serial: serial, firmware: firmware, seenAt: seenAt) }
    }

    public func pods() throws -> [PodRecord] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT serial, firmware, first_seen, last_seen FROM pods ORDER BY serial").map {
                PodRecord(serial: $0["serial"], firmware: $0["firmware"], firstSeen: $0["first_seen"], lastSeen: $0["last_seen"])
            }
        }
    }

    static func upsertPod(_ db: Database, serial: String, firmware: String?, seenAt: Int64) throws {
        try db.execute(
            sql: """
                INSERT INTO pods (serial, firmware, first_seen, last_seen) VALUES (?, ?, ?, ?)
                ON CONFLICT(serial) DO UPDATE SET
                    firmware = coalesce(excluded.firmware, firmware),
                    first_seen = min(first_seen, excluded.first_seen),
                    last_seen = max(last_seen, excluded.last_seen)
                """,
            arguments: [serial, firmware, seenAt, seenAt])
    }

    // MARK: Sessions

    /// Stores an analysed session with its epochs, stage blocks and (when final) its outbox
    /// event, in one transaction.
    ///
    /// Idempotent: saving the same night again (same pod, side and start, hence the same
    /// source id) replaces the session in place (same row id) with its epochs and blocks,
    /// never duplicating it. Sessions of the same pod and side that overlap it under another
    /// source id (a re-analysis that moved the start) are superseded and removed.
    /// A session the backend already has stays `synced`: the backend cannot update it.
    @discardableResult
    public func save(_ night: NightRecord) throws -> SaveResult {
        try NightValidation.validate(night)
        let now = clock.unixSeconds()
        let sourceID = night.sourceID
        let wakeDate = calendar.wakeDate(sessionEnd: night.end)
        let blocks = StageBlockBuilder.blocks(sessionStart: night.start, sessionEnd: night.end, epochs: night.epochs)
        return try pool.write { db in
            try Self.upsertPod(db, serial: night.podSerial, firmware: nil, seenAt: night.end)
            try db.execute(
                sql: """
                    DELETE FROM sessions WHERE pod_serial = ? AND side = ? AND source_id <> ?
                        AND start_time < ? AND end_time > ?
                    """,
                arguments: [night.podSerial, night.side.rawValue, sourceID, night.end, night.start])
            let superseded = db.changesCount

            let existing = try Row.fetchOne(
                db, sql: "SELECT id, sync_status FROM sessions WHERE source_id = ?", arguments: [sourceID])
            let alreadySynced = existing.map { ($0["sync_status"] as String) == SyncStatus.synced.rawValue } ?? false
            let status: SyncStatus = alreadySynced ? .synced : (night.isPreliminary ? .local : .pending)
            let m = night.metrics
            var values: [(String, (any DatabaseValueConvertible)?)] = [
                ("pod_serial", night.podSerial), ("side", night.side.rawValue),
                ("start_time", night.start), ("end_time", night.end),
                ("wake_date", wakeDate.description), ("time_zone", timeZone.identifier),
                ("is_final", !night.isPreliminary),
                ("time_in_bed_min", m.timeInBedMinutes), ("total_sleep_min", m.totalSleepMinutes),
                ("efficiency", m.efficiency), ("onset_latency_min", m.onsetLatencyMinutes),
                ("waso_min", m.wasoMinutes), ("awakenings", m.awakenings),
                ("awake_min", m.awakeMinutes), ("core_min", m.coreMinutes),
                ("deep_min", m.deepMinutes), ("rem_min", m.remMinutes),
                ("awake_pct", m.awakePercent), ("core_pct", m.corePercent),
                ("deep_pct", m.deepPercent), ("rem_pct", m.remPercent),
                ("mean_hr", m.meanHeartRate), ("mean_hrv", m.meanHRV), ("mean_br", m.meanBreathingRate),
                ("score", m.score), ("analyzed_at", now), ("sync_status", status.rawValue),
            ]
            if !alreadySynced { values.append(("sync_error", nil)) }
            let sessionID: Int64
            if let existing {
                sessionID = existing["id"]
                let assignments = values.map { "\($0.0) = ?" }.joined(separator: ", ")
                try db.execute(
                    sql: "UPDATE sessions SET \(assignments) WHERE id = ?",
                    arguments: StatementArguments(values.map { $0.1 } + [sessionID]))
                try db.execute(sql: "DELETE FROM epochs WHERE session_id = ?", arguments: [sessionID])
                try db.execute(sql: "DELETE FROM stage_blocks WHERE session_id = ?", arguments: [sessionID])
            } else {
                values.append(("source_id", sourceID))
                let columns = values.map(\.0).joined(separator: ", ")
                let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
                try db.execute(
                    sql: "INSERT INTO sessions (\(columns)) VALUES (\(marks))",
                    arguments: StatementArguments(values.map { $0.1 }))
                sessionID = db.lastInsertedRowID
            }

            let epochInsert = try db.cachedStatement(sql: """
                INSERT INTO epochs (session_id, start_time, stage, p_awake, p_core, p_deep, p_rem,
                                    heart_rate, hrv_rmssd, breathing_rate, movement)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for e in night.epochs {
                try epochInsert.execute(arguments: [
                    sessionID, e.start, e.stage.rawValue,
                    e.probabilities?.awake, e.probabilities?.core, e.probabilities?.deep, e.probabilities?.rem,
                    e.heartRate, e.hrvRMSSD, e.breathingRate, e.movement,
                ])
            }
            let blockInsert = try db.cachedStatement(sql: """
                INSERT INTO stage_blocks (session_id, stage, health_value, start_time, end_time) VALUES (?, ?, ?, ?, ?)
                """)
            for b in blocks {
                try blockInsert.execute(arguments: [sessionID, b.stage.rawValue, b.stage.healthValue, b.start, b.end])
            }

            var queued = false
            if status == .pending {
                // A new or re-queued upload; an in-flight one is left to its worker so no two
                // posts of the session ever run at once.
                try db.execute(
                    sql: """
                        INSERT INTO outbox (session_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
                        VALUES (?, 'sleep_session', 'pending', 0, ?, ?, ?)
                        ON CONFLICT(session_id) DO UPDATE SET
                            status = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at,
                            last_error = NULL, updated_at = excluded.updated_at
                        WHERE outbox.status IN ('pending', 'failed')
                        """,
                    arguments: [sessionID, now, now, now])
                queued = true
            } else if status == .local {
                try db.execute(
                    sql: "DELETE FROM outbox WHERE session_id = ? AND status IN ('pending', 'failed')",
                    arguments: [sessionID])
            }
            return SaveResult(
                sessionID: sessionID, sourceID: sourceID, wakeDate: wakeDate,
                replacedExisting: existing != nil, supersededSessions: superseded, queuedForUpload: queued)
        }
    }

    static let sessionColumns = """
        id, source_id, pod_serial, side, start_time, end_time, wake_date, time_zone, is_final,
        time_in_bed_min, total_sleep_min, efficiency, onset_latency_min, waso_min, awakenings,
        awake_min, core_min, deep_min, rem_min, awake_pct, core_pct, deep_pct, rem_pct,
        mean_hr, mean_hrv, mean_br, score, analyzed_at, sync_status, backend_session_id, sync_error
        """

    static func session(from row: Row) -> StoredSession {
        StoredSession(
            id: row["id"], sourceID: row["source_id"], podSerial: row["pod_serial"],
            side: BedSide(rawValue: row["side"]) ?? .left,
            start: row["start_time"], end: row["end_time"],
            wakeDate: CalendarDay(row["wake_date"] as String) ?? CalendarDay(year: 1970, month: 1, day: 1)!,
            timeZoneID: row["time_zone"], isFinal: row["is_final"],
            metrics: NightMetrics(
                timeInBedMinutes: row["time_in_bed_min"], totalSleepMinutes: row["total_sleep_min"],
                efficiency: row["efficiency"], onsetLatencyMinutes: row["onset_latency_min"],
                wasoMinutes: row["waso_min"], awakenings: row["awakenings"],
                awakeMinutes: row["awake_min"], coreMinutes: row["core_min"],
                deepMinutes: row["deep_min"], remMinutes: row["rem_min"],
                awakePercent: row["awake_pct"], corePercent: row["core_pct"],
                deepPercent: row["deep_pct"], remPercent: row["rem_pct"],
                meanHeartRate: row["mean_hr"], meanHRV: row["mean_hrv"], meanBreathingRate: row["mean_br"],
                score: row["score"]),
            analyzedAt: row["analyzed_at"],
            syncStatus: SyncStatus(rawValue: row["sync_status"]) ?? .pending,
            backendSessionID: row["backend_session_id"], syncError: row["sync_error"])
    }

    /// The session with this source id, if stored.
    public func session(sourceID: String) throws -> StoredSession? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.sessionColumns) FROM sessions WHERE source_id = ?", arguments: [sourceID])
                .map(Self.session(from:))
        }
    }

    /// Sessions whose stored wake date lies in `from...to` (inclusive), oldest first.
    public func sessions(wakeDatesFrom from: CalendarDay, to: CalendarDay, side: BedSide? = nil) throws -> [StoredSession] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.sessionColumns) FROM sessions
                    WHERE wake_date BETWEEN ? AND ? AND (? IS NULL OR side = ?)
                    ORDER BY end_time, side
                    """,
                arguments: [from.description, to.description, side?.rawValue, side?.rawValue]
            ).map(Self.session(from:))
        }
    }

    /// Sessions whose end lies in `span` (Unix seconds), oldest first: wake-date selection in
    /// any zone (see `LocalCalendar.span`).
    public func sessions(endingIn span: Range<Int64>, side: BedSide? = nil) throws -> [StoredSession] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.sessionColumns) FROM sessions
                    WHERE end_time >= ? AND end_time < ? AND (? IS NULL OR side = ?)
                    ORDER BY end_time, side
                    """,
                arguments: [span.lowerBound, span.upperBound, side?.rawValue, side?.rawValue]
            ).map(Self.session(from:))
        }
    }

    /// Every session, oldest first.
    public func allSessions(side: BedSide? = nil) throws -> [StoredSession] {
        try sessions(endingIn: Int64.min..<Int64.max, side: side)
    }

    /// Stored stage blocks of a session: the `in_bed` block first, then stages in time order.
    public func blocks(sessionID: Int64) throws -> [StageBlock] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT stage, start_time, end_time FROM stage_blocks WHERE session_id = ?
                    ORDER BY stage <> 'in_bed', start_time
                    """,
                arguments: [sessionID]
            ).compactMap { row in
                SleepCategory(rawValue: row["stage"]).map { StageBlock(stage: $0, start: row["start_time"], end: row["end_time"]) }
            }
        }
    }

    /// Stored epochs of a session in time order (empty once retention pruned them).
    public func epochs(sessionID: Int64) throws -> [EpochRecord] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT start_time, stage, p_awake, p_core, p_deep, p_rem, heart_rate, hrv_rmssd, breathing_rate, movement
                    FROM epochs WHERE session_id = ? ORDER BY start_time
                    """,
                arguments: [sessionID]
            ).compactMap { row in
                guard let stage = SleepStage(rawValue: row["stage"]) else { return nil }
                var probabilities: StageProbabilities?
                if let a: Double = row["p_awake"], let c: Double = row["p_core"], let d: Double = row["p_deep"], let r: Double = row["p_rem"] {
                    probabilities = StageProbabilities(awake: a, core: c, deep: d, rem: r)
                }
                return EpochRecord(
                    start: row["start_time"], stage: stage, probabilities: probabilities,
                    heartRate: row["heart_rate"], hrvRMSSD: row["hrv_rmssd"],
                    breathingRate: row["breathing_rate"], movement: row["movement"])
            }
        }
    }

    /// Number of stored sessions.
    public func sessionCount() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sessions") ?? 0 }
    }

    /// Per wake date totals (every session ending that day summed), oldest first; days
    /// without sessions are absent.
    public func dayTotals(from: CalendarDay, to: CalendarDay, side: BedSide? = nil) throws -> [DayTotal] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT wake_date, count(*) AS n, sum(time_in_bed_min) AS tib, sum(total_sleep_min) AS tst,
                           sum(awake_min) AS awake, sum(core_min) AS core, sum(deep_min) AS deep, sum(rem_min) AS rem
                    FROM sessions WHERE wake_date BETWEEN ? AND ? AND (? IS NULL OR side = ?)
                    GROUP BY wake_date ORDER BY wake_date
                    """,
                arguments: [from.description, to.description, side?.rawValue, side?.rawValue]
            ).compactMap { row in
                guard let date = CalendarDay(row["wake_date"] as String) else { return nil }
                return DayTotal(
                    date: date, sessions: row["n"], timeInBedMinutes: row["tib"], totalSleepMinutes: row["tst"],
                    awakeMinutes: row["awake"], coreMinutes: row["core"], deepMinutes: row["deep"], remMinutes: row["rem"])
            }
        }
    }

    // MARK: Retention

    /// Deletes epochs that start before `cutoff` (Unix seconds); sessions, their metrics and
    /// stage blocks are kept. Returns the number of epochs deleted.
    @discardableResult
    public func pruneEpochs(olderThan cutoff: Int64) throws -> Int {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM epochs WHERE start_time < ?", arguments: [cutoff])
            return db.changesCount
        }
    }

    /// Prunes epochs older than `maxAgeDays` days before the clock's now.
    @discardableResult
    public func pruneEpochs(maxAgeDays: Int) throws -> Int {
        try pruneEpochs(olderThan: clock.unixSeconds() - Int64(max(0, maxAgeDays)) * 86_400)
    }

    /// Number of stored epochs (all sessions).
    public func epochCount() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM epochs") ?? 0 }
    }
}
