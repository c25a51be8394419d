import Foundation
import GRDB
import SleepDomain
import Synchronization

/// The hub's SQLite store: one file in WAL mode with foreign keys on, migrated on open.
///
/// All writes that belong together run in one transaction (a session, its epochs, its
/// stage blocks and its outbox event), so a crash or an error never leaves half a night.
/// Safe to share between tasks and threads; several processes may open the same file.
/// Reads and writes are `async`: they run on GRDB's connections, never on the caller's
/// actor or thread. Once started, a read or write finishes even if the calling task is
/// cancelled (a night being kept at shutdown is still stored).
package final class NightStore: Sendable {
    /// Path of the database file.
    package let path: String
    /// Zone in which wake dates are attributed when sessions are saved.
    package let timeZone: TimeZone
    package let clock: any WallClock
    let pool: DatabasePool
    let calendar: LocalCalendar
    private let writeFailure = Mutex<String?>(nil)
    private let closed = Mutex(false)

    /// Opens (creating if needed) and migrates the database at `path`.
    /// - Throws: `StoreError.newerSchema` for a file written by a newer podbridge,
    ///   `notADatabase` / `foreignDatabase` for a file that is not podbridge's (left untouched).
    package init(path: String, timeZone: TimeZone = .current, clock: any WallClock = SystemClock()) throws {
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
        let migrator = StoreMigrations.migrator
        let unknown: Set<String>
        // SQLite says "disk I/O error" for a directory.
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StoreError.isDirectory(path: path)
        }
        do {
            if FileManager.default.fileExists(atPath: path) { try Self.checkBelongsToPodbridge(path) }
            pool = try DatabasePool(path: path, configuration: configuration)
            unknown = try pool.read { db in
                try migrator.appliedIdentifiers(db).subtracting(StoreMigrations.versions)
            }
            guard unknown.isEmpty else { throw StoreError.newerSchema(unknown: unknown.sorted()) }
            try migrator.migrate(pool)
        } catch let error as DatabaseError {
            throw Self.openingError(error, path: path)
        }
        // The reader that looked for unknown migrations holds the schema from before them: a
        // statement it prepares on a table a migration altered keeps the old columns (GRDB
        // caches them at preparation; SQLite re-prepares on step), so a column a migration
        // added reads as "not found". Readers are opened afresh on the migrated schema.
        pool.invalidateReadOnlyConnections()
    }

    /// What an SQLite error while opening means for the user, in their words: GRDB's own text
    /// ("SQLite error 8 … while executing CREATE TABLE grdb_issue_102") points at nothing.
    private static func openingError(_ error: DatabaseError, path: String) -> any Error {
        switch error.resultCode {
        case .SQLITE_NOTADB: StoreError.notADatabase(path: path)
        case .SQLITE_CANTOPEN: StoreError.cannotOpen(path: path, reason: error.message ?? "\(error.resultCode)")
        case .SQLITE_CORRUPT: StoreError.damaged(path: path, reason: error.message ?? "malformed")
        case .SQLITE_READONLY: StoreError.readOnly(path: path)
        case .SQLITE_BUSY: StoreError.busy(path: path, reason: error.message ?? "database is locked")
        // A read-only directory: SQLite cannot make the -wal/-shm beside the file.
        case .SQLITE_IOERR where !FileManager.default.isWritableFile(atPath: (path as NSString).deletingLastPathComponent.isEmpty
                                                                      ? "." : (path as NSString).deletingLastPathComponent):
            StoreError.readOnly(path: path)
        default: error
        }
    }

    /// SQLite's quick integrity check (pages and records, not index contents): the problems
    /// found, none for a sound file (a file too damaged to check says so as its one problem).
    /// The hub runs it at start (`checkIntegrity`): a file damaged inside opens and reads, and
    /// fails only when a night is written to it.
    package func quickCheck() async throws -> [String] {
        let result: [String]
        do {
            result = try await read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT {
            return [error.message ?? "malformed"]
        }
        return result == ["ok"] ? [] : result
    }

    /// Throws `StoreError.damaged` for a file `quickCheck` finds problems in.
    package func checkIntegrity() async throws {
        let problems = try await quickCheck()
        guard let first = problems.first else { return }
        throw StoreError.damaged(path: path, reason: first + (problems.count > 1 ? " and \(problems.count - 1) more problems" : ""))
    }

    /// Refuses another application's SQLite database before anything is written to it (opening
    /// it as a pool alone would switch it to WAL): tables, none of them podbridge's migrations.
    private static func checkBelongsToPodbridge(_ path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        let tables = try queue.read { db in
            try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name
                """)
        }
        if !tables.isEmpty, !tables.contains("grdb_migrations") {
            throw StoreError.foreignDatabase(path: path, tables: tables)
        }
    }

    /// Makes the directory a new database file at `path` goes into (the hub, and `schedule
    /// set` before the hub ever ran, create the database; SQLite does not make directories).
    package static func createDirectory(containing path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try createDirectory(directory) }
    }

    /// Makes `directory` and its parents; a failure says which and why in a sentence (a state
    /// directory where the user may not write), not Foundation's NSCocoaErrorDomain dump.
    package static func createDirectory(_ directory: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.cannotCreateDirectory(path: directory, reason: FileErrorReason.describe(error))
        }
    }

    /// Opens an existing database only; a missing file is an error instead of a new empty store.
    package static func openExisting(path: String, timeZone: TimeZone = .current, clock: any WallClock = SystemClock()) throws -> NightStore {
        guard FileManager.default.fileExists(atPath: path) else {
            // Missing, or behind a directory this user may not enter (fileExists says false for both).
            do { _ = try FileManager.default.attributesOfItem(atPath: path) } catch let error as CocoaError
                where error.code == .fileReadNoPermission {
                throw StoreError.permissionDenied(path: path)
            } catch {}
            throw StoreError.missingDatabase(path: path)
        }
        return try NightStore(path: path, timeZone: timeZone, clock: clock)
    }

    /// Runs `body` on a reader connection, off the caller's actor.
    ///
    /// GRDB's completion-based access rather than its `async` one: a read or write, once
    /// asked for, runs to the end even when the calling task is cancelled (as the blocking
    /// calls did), so a night kept or a claim released during shutdown is still written.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await Self.retryingWhenContended {
            try await withCheckedThrowingContinuation { continuation in
                self.pool.asyncRead { db in continuation.resume(with: Result { try body(db.get()) }) }
            }
        }
    }

    /// Runs `body` in one write transaction, off the caller's actor.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await Self.retryingWhenContended {
            try await withCheckedThrowingContinuation { continuation in
                self.pool.asyncWrite(body) { _, result in
                    if case .failure(let error as DatabaseError) = result, Self.isStorageFailure(error) {
                        self.writeFailure.withLock { $0 = "\(error)" }
                    } else if case .success = result {
                        self.writeFailure.withLock { $0 = nil }
                    }
                    continuation.resume(with: result)
                }
            }
        }
    }

    /// The pauses before each new attempt at an access SQLite refused with SQLITE_PROTOCOL.
    static let contentionPauses: [Duration] = [.milliseconds(20), .milliseconds(100), .milliseconds(500)]

    /// Runs `access` again, after a pause, when SQLite answers SQLITE_PROTOCOL: in WAL mode that
    /// is a lock it could not take after its own retries under heavy contention (a loaded
    /// machine, a slow card; the busy timeout does not cover it), and the transaction was rolled
    /// back, so it can be run again whole. A night must not be lost to a moment of load.
    static func retryingWhenContended<T>(pauses: [Duration] = contentionPauses,
                                         _ access: () async throws -> T) async throws -> T {
        for pause in pauses {
            do {
                return try await access()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_PROTOCOL {
                try? await Task.sleep(for: pause)
            }
        }
        return try await access()
    }

    /// Why the last write failed for the file's sake (a full disk, a read-only or damaged
    /// file), until a write succeeds again; nil while writes succeed. `/readyz` reports it:
    /// a hub that cannot store its nights is not ready, whatever it can still read.
    package var storageFailure: String? { writeFailure.withLock { $0 } }

    /// Makes every write fail (SQLITE_READONLY, as on a file system the kernel remounted
    /// read-only after an error, which SD cards do) or take again: SQLite's `query_only` on the
    /// one writer connection. For the tests of what a store that refuses writes does, which
    /// could otherwise reach that state only by remounting a disk.
    package func refuseWrites(_ refuse: Bool) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            pool.asyncWriteWithoutTransaction { db in
                continuation.resume(with: Result { try db.execute(sql: "PRAGMA query_only = \(refuse ? "ON" : "OFF")") })
            }
        }
    }

    private static func isStorageFailure(_ error: DatabaseError) -> Bool {
        [.SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_CANTOPEN]
            .contains(error.resultCode)
    }

    /// Migration identifiers applied to this database, oldest first.
    package func appliedMigrations() async throws -> [String] {
        try await read { db in try StoreMigrations.migrator.appliedMigrations(db) }
    }

    /// Result of `PRAGMA integrity_check` (`["ok"]` for a sound file).
    package func integrityCheck() async throws -> [String] {
        try await read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
    }

    /// The SQLite journal mode in use (`wal`).
    package func journalMode() async throws -> String {
        try await read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }

    /// Closes the file; the store must not be used afterwards. The write-ahead log is folded
    /// into the file first, so after a clean stop the `.sqlite` alone holds every night (a
    /// copy or backup of it without its `-wal` had only the nights of before the last
    /// checkpoint). Best effort: a reader still open makes it wait, then close says so.
    package func close() throws {
        guard !closed.withLock({ closed in defer { closed = true }; return closed }) else { return }
        _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try pool.close()
        // The pool's last connections to close are its read-only readers, which may not
        // remove the log, so an empty -wal and the -shm were left beside a stopped hub's file.
        // One writable connection opened and closed last removes them.
        // (Only while the log is there: a file moved aside meanwhile must not be made anew.)
        if FileManager.default.fileExists(atPath: path + "-wal"), let last = try? DatabaseQueue(path: path) { try? last.close() }
    }

    // MARK: Pods

    /// Records that a pod was seen (its firmware, when known, replaces the stored one).
    package func recordPod(serial: String, firmware: String?, seenAt: Int64) async throws {
        try await write { db in try PodRecord.upsert(db, serial: serial, firmware: firmware, seenAt: seenAt) }
    }

    package func pods() async throws -> [PodRecord] {
        try await read { db in try PodRecord.order(PodRecord.Columns.serial).fetchAll(db) }
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
    package func save(_ night: NightRecord) async throws -> SaveResult {
        try NightValidation.validate(night)
        let now = clock.unixSeconds()
        let sourceID = night.sourceID
        let wakeDate = calendar.wakeDate(sessionEnd: night.end)
        let zoneID = timeZone.identifier
        let blocks = StageBlockBuilder.blocks(sessionStart: night.start, sessionEnd: night.end, epochs: night.epochs)
        return try await write { db in
            typealias S = StoredSession.Columns
            try PodRecord.upsert(db, serial: night.podSerial, firmware: nil, seenAt: night.end)
            let superseded = try StoredSession
                .filter(S.podSerial == night.podSerial && S.side == night.side.rawValue && S.sourceID != sourceID
                        && S.startTime < night.end && S.endTime > night.start)
                .deleteAll(db)

            let existing = try StoredSession.filter(S.sourceID == sourceID).fetchOne(db)
            let alreadySynced = existing?.syncStatus == .synced
            let status: SyncStatus = alreadySynced ? .synced : (night.isFinal ? .pending : .local)
            var session = StoredSession(night, wakeDate: wakeDate, timeZoneID: zoneID, analyzedAt: now, syncStatus: status)
            if let existing {
                // The backend's id is kept; so is the last error of a session the backend has.
                session.id = existing.id
                session.backendSessionID = existing.backendSessionID
                if alreadySynced { session.syncError = existing.syncError }
                try session.update(db)
                try EpochRecord.filter(EpochRecord.Columns.sessionID == existing.id).deleteAll(db)
                try StageBlock.filter(StageBlock.Columns.sessionID == existing.id).deleteAll(db)
            } else {
                try session.insert(db)
            }
            let sessionID = session.id
            for epoch in night.epochs { try OfSession(sessionID: sessionID, record: epoch).insert(db) }
            for block in blocks { try OfSession(sessionID: sessionID, record: block).insert(db) }

            var queued = false
            if status == .pending {
                try Self.queueUpload(db, sessionID: sessionID, sourceID: sourceID, now: now)
                queued = true
            } else if status == .local {
                try OutboxEvent
                    .filter(OutboxEvent.Columns.sessionID == sessionID
                            && [OutboxStatus.pending.rawValue, OutboxStatus.failed.rawValue].contains(OutboxEvent.Columns.status))
                    .deleteAll(db)
            }
            return SaveResult(
                sessionID: sessionID, sourceID: sourceID, wakeDate: wakeDate,
                replacedExisting: existing != nil, supersededSessions: superseded, queuedForUpload: queued)
        }
    }

    /// The session with this source id, if stored.
    package func session(sourceID: String) async throws -> StoredSession? {
        try await read { db in
            try StoredSession.filter(StoredSession.Columns.sourceID == sourceID).fetchOne(db)
        }
    }

    /// Sessions whose stored wake date lies in `from...to` (inclusive), oldest first.
    package func sessions(wakeDatesFrom from: CalendarDay, to: CalendarDay, side: BedSide? = nil) async throws -> [StoredSession] {
        try await read { db in
            try StoredSession.ordered(side: side)
                .filter((from.description...to.description).contains(StoredSession.Columns.wakeDate))
                .fetchAll(db)
        }
    }

    /// Sessions whose end lies in `span` (Unix seconds), oldest first: wake-date selection in
    /// any zone (see `LocalCalendar.span`).
    package func sessions(endingIn span: Range<Int64>, side: BedSide? = nil) async throws -> [StoredSession] {
        try await read { db in
            try StoredSession.ordered(side: side)
                .filter(StoredSession.Columns.endTime >= span.lowerBound && StoredSession.Columns.endTime < span.upperBound)
                .fetchAll(db)
        }
    }

    /// Every session, oldest first.
    package func allSessions(side: BedSide? = nil) async throws -> [StoredSession] {
        try await read { db in try StoredSession.ordered(side: side).fetchAll(db) }
    }

    /// Stored stage blocks of a session: the `in_bed` block first, then stages in time order.
    package func blocks(sessionID: Int64) async throws -> [StageBlock] {
        try await read { db in try StageBlock.blocks(db, sessionID: sessionID) }
    }

    /// Stored epochs of a session in time order (empty once retention pruned them).
    package func epochs(sessionID: Int64) async throws -> [EpochRecord] {
        try await read { db in
            try EpochRecord.filter(EpochRecord.Columns.sessionID == sessionID).order(EpochRecord.Columns.startTime)
                .fetchReadable(db)
        }
    }

    /// Number of stored sessions.
    package func sessionCount() async throws -> Int {
        try await read { db in try StoredSession.fetchCount(db) }
    }

    /// Per wake date totals (every session ending that day summed), oldest first; days
    /// without sessions are absent.
    package func dayTotals(from: CalendarDay, to: CalendarDay, side: BedSide? = nil) async throws -> [DayTotal] {
        try await read { db in
            typealias S = StoredSession.Columns
            var request = StoredSession
                .select(S.wakeDate, count(S.id).forKey("n"), sum(S.timeInBed).forKey("tib"), sum(S.totalSleep).forKey("tst"),
                        sum(S.awake).forKey("awake"), sum(S.core).forKey("core"), sum(S.deep).forKey("deep"),
                        sum(S.rem).forKey("rem"))
                .filter((from.description...to.description).contains(S.wakeDate))
                .group(S.wakeDate).order(S.wakeDate)
            if let side { request = request.filter(S.side == side.rawValue) }
            return try Row.fetchAll(db, request).compactMap { row in
                guard let date = CalendarDay(row[S.wakeDate] as String) else { return nil }
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
    package func pruneEpochs(olderThan cutoff: Int64) async throws -> Int {
        try await write { db in try EpochRecord.filter(EpochRecord.Columns.startTime < cutoff).deleteAll(db) }
    }

    /// Prunes epochs older than `maxAgeDays` days before the clock's now.
    @discardableResult
    package func pruneEpochs(maxAgeDays: Int) async throws -> Int {
        try await pruneEpochs(olderThan: clock.unixSeconds() - Int64(max(0, maxAgeDays)) * 86_400)
    }

    /// Number of stored epochs (all sessions).
    package func epochCount() async throws -> Int {
        try await read { db in try EpochRecord.fetchCount(db) }
    }
}
