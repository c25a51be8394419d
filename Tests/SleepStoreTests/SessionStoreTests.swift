import Foundation
import GRDB
import Testing
@testable import SleepStore
import SleepDomain

@Suite struct SessionStoreTests {
    let utc = TimeZone(identifier: "UTC")!

    func counts(_ store: SleepStore) throws -> [String: Int] {
        try store.pool.read { db in
            var result: [String: Int] = [:]
            for table in ["sessions", "epochs", "stage_blocks", "outbox", "pods"] {
                result[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)")
            }
            return result
        }
    }

    @Test func savesASessionWithEpochsBlocksAndOutboxEventAndReadsThemBack() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try SleepStore(path: dir.path("s.sqlite"), timeZone: utc, clock: ManualClock(5_000))
        let start = Fixtures.utc(2024, 1, 15, 22)
        let night = Fixtures.night(start: start, stages: [(.awake, 2), (.core, 4), (.deep, 3), (.core, 1)])
        let result = try store.save(night)
        #expect(result.sourceID == "podbridge:PB-0001:left:\(start)")
        #expect(result.wakeDate == CalendarDay("2024-01-15"))
        #expect(result.queuedForUpload && !result.replacedExisting)
        let stored = try #require(try store.session(sourceID: result.sourceID))
        #expect(stored.metrics == night.metrics)
        #expect(stored.start == start && stored.end == start + 300)
        #expect(stored.syncStatus == .pending && stored.isFinal && stored.analyzedAt == 5_000)
        #expect(try store.epochs(sessionID: stored.id) == night.epochs)
        #expect(try store.blocks(sessionID: stored.id) == [
            StageBlock(stage: .inBed, start: start, end: start + 300),
            StageBlock(stage: .awake, start: start, end: start + 60),
            StageBlock(stage: .core, start: start + 60, end: start + 180),
            StageBlock(stage: .deep, start: start + 180, end: start + 270),
            StageBlock(stage: .core, start: start + 270, end: start + 300),
        ])
        #expect(try store.outboxEvents().map(\.status) == [.pending])
        #expect(try store.pods().map(\.serial) == ["PB-0001"])
    }

    @Test func aFailureInTheMiddleOfASaveLeavesNothingHalfWritten() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("t.sqlite")
        let store = try SleepStore(path: path, timeZone: utc)
        let first = Fixtures.night(start: Fixtures.utc(2024, 1, 15, 22), stages: [(.core, 4), (.rem, 2)])
        try store.save(first)
        let before = try counts(store)

        // A second connection (as another process would) installs a trigger that makes the
        // outbox insert, the last write of a save, fail after session, epochs and blocks.
        let other = try DatabaseQueue(path: path)
        try other.write { db in
            try db.execute(sql: "CREATE TRIGGER boom BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'disk said no'); END")
        }
        let second = Fixtures.night(side: .right, start: Fixtures.utc(2024, 1, 16, 22), stages: [(.deep, 5)])
        #expect(throws: DatabaseError.self) { try store.save(second) }
        #expect(try counts(store) == before)
        #expect(try store.session(sourceID: second.sourceID) == nil)

        // A failing re-analysis keeps the previous version whole.
        try other.write { db in
            try db.execute(sql: "DROP TRIGGER boom")
            try db.execute(sql: "CREATE TRIGGER boom2 BEFORE INSERT ON stage_blocks WHEN NEW.stage = 'deep' BEGIN SELECT RAISE(ABORT, 'no'); END")
        }
        var reanalysed = first
        reanalysed.epochs = first.epochs.map { var e = $0; e.stage = .deep; return e }
        #expect(throws: DatabaseError.self) { try store.save(reanalysed) }
        let kept = try #require(try store.session(sourceID: first.sourceID))
        #expect(try store.epochs(sessionID: kept.id) == first.epochs)
        #expect(try store.blocks(sessionID: kept.id).map(\.stage) == [.inBed, .core, .rem])
        #expect(try counts(store) == before)
        try other.close()
    }

    @Test func reAnalysingANightReplacesItInPlaceWithoutDuplicates() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let clock = ManualClock(1_000)
        let store = try SleepStore(path: dir.path("r.sqlite"), timeZone: utc, clock: clock)
        let start = Fixtures.utc(2024, 2, 1, 23)
        let preliminary = Fixtures.night(start: start, stages: [(.awake, 2), (.core, 6)], preliminary: true)
        let p = try store.save(preliminary)
        #expect(!p.queuedForUpload)
        #expect(try store.outboxEvents().isEmpty)
        #expect(try store.session(sourceID: p.sourceID)?.syncStatus == .local)

        clock.advance(by: 60)
        let final = Fixtures.night(start: start, stages: [(.awake, 2), (.core, 4), (.deep, 6), (.rem, 3)])
        let f = try store.save(final)
        let again = try store.save(final)
        #expect(f.sessionID == p.sessionID && again.sessionID == p.sessionID)
        #expect(f.replacedExisting && again.replacedExisting)
        #expect(try counts(store) == ["sessions": 1, "epochs": 15, "stage_blocks": 5, "outbox": 1, "pods": 1])
        #expect(try store.session(sourceID: f.sourceID)?.metrics == final.metrics)
        #expect(try store.session(sourceID: f.sourceID)?.analyzedAt == 1_060)

        // Once delivered, a re-analysis keeps the session synced and does not queue it again.
        let claim = try #require(try store.claimNextDueEvent(leaseSeconds: 60))
        #expect(try store.markDelivered(claim, backendSessionID: "b-1"))
        let afterDelivery = try store.save(final)
        #expect(!afterDelivery.queuedForUpload)
        let s = try #require(try store.session(sourceID: f.sourceID))
        #expect(s.syncStatus == .synced && s.backendSessionID == "b-1")
        #expect(try store.outboxEvents().map(\.status) == [.delivered])
    }

    @Test func aReAnalysisThatMovesTheStartSupersedesTheOverlappingSession() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try SleepStore(path: dir.path("m.sqlite"), timeZone: utc)
        let start = Fixtures.utc(2024, 2, 1, 23)
        try store.save(Fixtures.night(start: start, stages: [(.core, 10)], preliminary: true))
        try store.save(Fixtures.night(side: .right, start: start, stages: [(.core, 10)]))
        let moved = try store.save(Fixtures.night(start: start - 120, stages: [(.awake, 4), (.core, 10)]))
        #expect(moved.supersededSessions == 1)
        #expect(try store.allSessions(side: .left).map(\.start) == [start - 120])
        #expect(try store.allSessions(side: .right).count == 1)
        #expect(try counts(store)["epochs"] == 24)
    }

    @Test func refusesInvalidNightsWithAReason() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try SleepStore(path: dir.path("v.sqlite"), timeZone: utc)
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
            #expect(throws: StoreError.self) { try store.save(bad) }
        }
        #expect(try store.sessionCount() == 0)
    }

    @Test func retentionPrunesOldEpochsButKeepsSessionsAndBlocks() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let clock = ManualClock(Fixtures.utc(2024, 3, 1, 12))
        let store = try SleepStore(path: dir.path("p.sqlite"), timeZone: utc, clock: clock)
        let old = try store.save(Fixtures.night(start: Fixtures.utc(2024, 1, 1, 22), stages: [(.core, 4), (.deep, 4)]))
        let recent = try store.save(Fixtures.night(start: Fixtures.utc(2024, 2, 28, 22), stages: [(.core, 4), (.rem, 4)]))
        #expect(try store.pruneEpochs(maxAgeDays: 30) == 8)
        #expect(try store.epochs(sessionID: old.sessionID).isEmpty)
        #expect(try store.epochs(sessionID: recent.sessionID).count == 8)
        #expect(try store.blocks(sessionID: old.sessionID).map(\.stage) == [.inBed, .core, .deep])
        #expect(try store.sessionCount() == 2)
        #expect(try store.pruneEpochs(maxAgeDays: 30) == 0)
    }

    @Test func scheduleInForceChangesOnlyOnChangeAndKeepsHistory() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let clock = ManualClock(10_000)
        let store = try SleepStore(path: dir.path("sch.sqlite"), timeZone: utc, clock: clock)
        var s = ScheduleRecord(podSerial: "PB-1", side: .left, powerOn: "22:30", powerOff: "06:45", weekdayMask: 0b0011111,
                               alarm: AlarmSetting(time: "06:30", intensity: 60, pattern: "pulse", durationSeconds: 120),
                               source: .inferred, timeZoneID: "Europe/Berlin")
        #expect(try store.setSchedule(s))
        #expect(try !store.setSchedule(s))
        clock.advance(by: 100)
        s.powerOn = "23:00"
        s.source = .manual
        #expect(try store.setSchedule(s))
        try store.markSchedulePushed(podSerial: "PB-1", side: .left, at: 10_200)
        let inForce = try #require(try store.scheduleInForce(podSerial: "PB-1", side: .left))
        #expect(inForce.schedule == s && inForce.setAt == 10_100 && inForce.pushedAt == 10_200)
        #expect(try store.scheduleHistory(podSerial: "PB-1", side: .left).map(\.schedule.powerOn) == ["22:30", "23:00"])
        #expect(try store.scheduleInForce(podSerial: "PB-1", side: .right) == nil)
        s.powerOff = "25:00"
        #expect(throws: StoreError.self) { try store.setSchedule(s) }
    }
}
