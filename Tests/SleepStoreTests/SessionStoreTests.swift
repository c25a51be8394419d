import Foundation
import GRDB
import Testing
@testable import SleepStore
import SleepDomain

@Suite struct SessionStoreTests {
    let utc = TimeZone(identifier: "UTC")!

    func counts(_ store: NightStore) async throws -> [String: Int] {
        try await store.pool.read { db in
            var result: [String: Int] = [:]
            for table in ["sessions", "epochs", "stage_blocks", "outbox", "pods"] {
                result[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)")
            }
            return result
        }
    }

    @Test func savesASessionWithEpochsBlocksAndOutboxEventAndReadsThemBack() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("s.sqlite"), timeZone: utc, clock: ManualClock(5_000))
        let start = Fixtures.utc(2024, 1, 15, 22)
        let night = Fixtures.night(start: start, stages: [(.awake, 2), (.core, 4), (.deep, 3), (.core, 1)])
        let result = try await store.save(night)
        #expect(result.sourceID == "podbridge:PB-0001:left:\(start)")
        #expect(result.wakeDate == CalendarDay("2024-01-15"))
        #expect(result.queuedForUpload && !result.replacedExisting)
        let stored = try #require(try await store.session(sourceID: result.sourceID))
        #expect(stored.metrics == night.metrics)
        #expect(stored.start == start && stored.end == start + 300)
        #expect(stored.syncStatus == .pending && stored.isFinal && stored.analyzedAt == 5_000)
        #expect(try await store.epochs(sessionID: stored.id) == night.epochs)
        #expect(try await store.blocks(sessionID: stored.id) == [
            StageBlock(stage: .inBed, start: start, end: start + 300),
            StageBlock(stage: .awake, start: start, end: start + 60),
            StageBlock(stage: .core, start: start + 60, end: start + 180),
            StageBlock(stage: .deep, start: start + 180, end: start + 270),
            StageBlock(stage: .core, start: start + 270, end: start + 300),
        ])
        #expect(try await store.outboxEvents().map(\.status) == [.pending])
        #expect(try await store.pods().map(\.serial) == ["PB-0001"])
    }

    /// After a clean stop the database file alone holds every night: a copy or backup of the
    /// `.sqlite` without its `-wal` had only the nights before the last checkpoint, when another
    /// connection (a command beside the hub) kept SQLite from folding the log in at close.
    @Test func closingFoldsTheLogIntoTheFile() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("s.sqlite")
        let store = try NightStore(path: path, timeZone: utc, clock: ManualClock(5_000))
        let beside = try NightStore(path: path, timeZone: utc)
        defer { try? beside.close() }
        _ = try await beside.sessionCount()
        try await store.save(Fixtures.night(start: Fixtures.utc(2024, 1, 15, 22), stages: [(.core, 600)]))
        try store.close()
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "the log still holds \(wal) bytes")
        let copy = dir.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let restored = try NightStore(path: copy, timeZone: utc)
        defer { try? restored.close() }
        #expect(try await restored.allSessions().count == 1)
    }

    /// Alone on its file, a store leaves nothing beside it after close: the pool's read-only
    /// readers closed last and could not remove the log, so a stopped hub left an empty
    /// `-wal` and the `-shm`, which read as a hub still running or one that crashed.
    @Test func aStoreClosedAloneLeavesOnlyItsFile() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("alone.sqlite")
        let store = try NightStore(path: path, timeZone: utc, clock: ManualClock(5_000))
        try await store.save(Fixtures.night(start: Fixtures.utc(2024, 1, 15, 22), stages: [(.core, 600)]))
        _ = try await store.allSessions()
        try store.close()
        #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: path + "-shm"),
                "\((try? FileManager.default.contentsOfDirectory(atPath: dir.path(""))) ?? [])")
        let reopened = try NightStore(path: path, timeZone: utc)
        #expect(try await reopened.allSessions().count == 1)
        try reopened.close()
    }

    @Test func aFailureInTheMiddleOfASaveLeavesNothingHalfWritten() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("t.sqlite")
        let store = try NightStore(path: path, timeZone: utc)
        let first = Fixtures.night(start: Fixtures.utc(2024, 1, 15, 22), stages: [(.core, 4), (.rem, 2)])
        try await store.save(first)
        let before = try await counts(store)

        // A second connection (as another process would) installs a trigger that makes the
        // outbox insert, the last write of a save, fail after session, epochs and blocks.
        let other = try DatabaseQueue(path: path)
        try await other.write { db in
            try db.execute(sql: "CREATE TRIGGER boom BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'disk said no'); END")
        }
        let second = Fixtures.night(side: .right, start: Fixtures.utc(2024, 1, 16, 22), stages: [(.deep, 5)])
        await #expect(throws: DatabaseError.self) { try await store.save(second) }
        #expect(try await counts(store) == before)
        #expect(try await store.session(sourceID: second.sourceID) == nil)

        // A failing re-analysis keeps the previous version whole.
        try await other.write { db in
            try db.execute(sql: "DROP TRIGGER boom")
            try db.execute(sql: "CREATE TRIGGER boom2 BEFORE INSERT ON stage_blocks WHEN NEW.stage = 'deep' BEGIN SELECT RAISE(ABORT, 'no'); END")
        }
        var reanalysed = first
        reanalysed.epochs = first.epochs.map { var e = $0; e.stage = .deep; return e }
        await #expect(throws: DatabaseError.self) { try await store.save(reanalysed) }
        let kept = try #require(try await store.session(sourceID: first.sourceID))
        #expect(try await store.epochs(sessionID: kept.id) == first.epochs)
        #expect(try await store.blocks(sessionID: kept.id).map(\.stage) == [.inBed, .core, .rem])
        #expect(try await counts(store) == before)
        try other.close()
    }

    @Test func reAnalysingANightReplacesItInPlaceWithoutDuplicates() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let clock = ManualClock(1_000)
        let store = try NightStore(path: dir.path("r.sqlite"), timeZone: utc, clock: clock)
        let start = Fixtures.utc(2024, 2, 1, 23)
        let preliminary = Fixtures.night(start: start, stages: [(.awake, 2), (.core, 6)], preliminary: true)
        let p = try await store.save(preliminary)
        #expect(!p.queuedForUpload)
        #expect(try await store.outboxEvents().isEmpty)
        #expect(try await store.session(sourceID: p.sourceID)?.syncStatus == .local)

        clock.advance(by: 60)
        let final = Fixtures.night(start: start, stages: [(.awake, 2), (.core, 4), (.deep, 6), (.rem, 3)])
        let f = try await store.save(final)
        let again = try await store.save(final)
        #expect(f.sessionID == p.sessionID && again.sessionID == p.sessionID)
        #expect(f.replacedExisting && again.replacedExisting)
        #expect(try await counts(store) == ["sessions": 1, "epochs": 15, "stage_blocks": 5, "outbox": 1, "pods": 1])
        #expect(try await store.session(sourceID: f.sourceID)?.metrics == final.metrics)
        #expect(try await store.session(sourceID: f.sourceID)?.analyzedAt == 1_060)

        // Once delivered, a re-analysis keeps the session synced and does not queue it again.
        let claim = try #require(try await store.claimNextDueEvent(leaseSeconds: 60))
        #expect(try await store.markDelivered(claim, backendSessionID: "b-1"))
        let afterDelivery = try await store.save(final)
        #expect(!afterDelivery.queuedForUpload)
        let s = try #require(try await store.session(sourceID: f.sourceID))
        #expect(s.syncStatus == .synced && s.backendSessionID == "b-1")
        #expect(try await store.outboxEvents().map(\.status) == [.delivered])
    }

    @Test func aReAnalysisThatMovesTheStartSupersedesTheOverlappingSession() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("m.sqlite"), timeZone: utc)
        let start = Fixtures.utc(2024, 2, 1, 23)
        try await store.save(Fixtures.night(start: start, stages: [(.core, 10)], preliminary: true))
        try await store.save(Fixtures.night(side: .right, start: start, stages: [(.core, 10)]))
        let moved = try await store.save(Fixtures.night(start: start - 120, stages: [(.awake, 4), (.core, 10)]))
        #expect(moved.supersededSessions == 1)
        #expect(try await store.allSessions(side: .left).map(\.start) == [start - 120])
        #expect(try await store.allSessions(side: .right).count == 1)
        #expect(try await counts(store)["epochs"] == 24)
    }

    @Test func refusesInvalidNightsWithAReason() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("v.sqlite"), timeZone: utc)
        let start = Fixtures.utc(2024, 1, 1, 22)
        var unordered = Fixtures.night(start: start, stages: [(.core, 3)])
        unordered.epochs.swapAt(0, 2)
        // An epoch cannot be "in bed": its type (SleepStage) has no such case, only blocks do.
        #expect(SleepStage(rawValue: "in_bed") == nil && SleepCategory(rawValue: "in_bed") == .inBed)
        var nanHR = Fixtures.night(start: start, stages: [(.core, 3)])
        nanHR.epochs[0].heartRate = .nan
        var backwards = Fixtures.night(start: start, stages: [(.core, 3)])
        backwards.end = start
        var badSerial = Fixtures.night(start: start, stages: [(.core, 3)])
        badSerial.podSerial = "a:b"
        for bad in [unordered, nanHR, backwards, badSerial] {
            await #expect(throws: StoreError.self) { try await store.save(bad) }
        }
        #expect(try await store.sessionCount() == 0)
    }

    @Test func retentionPrunesOldEpochsButKeepsSessionsAndBlocks() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let clock = ManualClock(Fixtures.utc(2024, 3, 1, 12))
        let store = try NightStore(path: dir.path("p.sqlite"), timeZone: utc, clock: clock)
        let old = try await store.save(Fixtures.night(start: Fixtures.utc(2024, 1, 1, 22), stages: [(.core, 4), (.deep, 4)]))
        let recent = try await store.save(Fixtures.night(start: Fixtures.utc(2024, 2, 28, 22), stages: [(.core, 4), (.rem, 4)]))
        #expect(try await store.pruneEpochs(maxAgeDays: 30) == 8)
        #expect(try await store.epochs(sessionID: old.sessionID).isEmpty)
        #expect(try await store.epochs(sessionID: recent.sessionID).count == 8)
        #expect(try await store.blocks(sessionID: old.sessionID).map(\.stage) == [.inBed, .core, .deep])
        #expect(try await store.sessionCount() == 2)
        #expect(try await store.pruneEpochs(maxAgeDays: 30) == 0)
    }
}
