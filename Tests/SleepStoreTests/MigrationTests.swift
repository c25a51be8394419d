import Foundation
import GRDB
import SleepDomain
import Testing
@testable import SleepStore

@Suite struct MigrationTests {
    @Test func migratesAnEmptyFileToTheCurrentSchemaInWALWithForeignKeys() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        #expect(try await store.appliedMigrations() == StoreMigrations.versions)
        #expect(try await store.journalMode() == "wal")
        #expect(try await store.integrityCheck() == ["ok"])
        let fk = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA foreign_keys") }
        #expect(fk == 1)
        // Opening again is a no-op migration.
        try store.close()
        let again = try NightStore(path: dir.path("hub.sqlite"))
        #expect(try await again.appliedMigrations() == StoreMigrations.versions)
    }

    @Test func migratesAVersion1DatabaseKeepingItsData() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("old.sqlite")
        // Write a database exactly as the v1 release did.
        do {
            let queue = try DatabaseQueue(path: path)
            try StoreMigrations.migrator.migrate(queue, upTo: "v1")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO pods VALUES ('PB-OLD', '1.0.0', 100, 200)")
                for (id, status) in [(1, "failed"), (2, "pending")] {
                    try db.execute(sql: """
                        INSERT INTO sessions (id, source_id, pod_serial, side, start_time, end_time, wake_date, time_zone,
                            is_final, time_in_bed_min, total_sleep_min, efficiency, onset_latency_min, waso_min, awakenings,
                            awake_min, core_min, deep_min, rem_min, awake_pct, core_pct, deep_pct, rem_pct,
                            mean_hr, mean_hrv, mean_br, score, analyzed_at, sync_status)
                        VALUES (?, ?, 'PB-OLD', 'left', ?, ?, '2024-01-16', 'UTC', 1, 60, 50, 83.3, 5, 5, 1,
                            10, 30, 10, 10, 16.7, 50, 16.7, 16.7, 60, 40, 14, 70, 300, ?)
                        """, arguments: [id, "podbridge:PB-OLD:left:\(id * 10_000)", id * 10_000, id * 10_000 + 3600, status])
                    try db.execute(sql: "INSERT INTO stage_blocks (session_id, stage, start_time, end_time) VALUES (?, 'in_bed', ?, ?)",
                                   arguments: [id, id * 10_000, id * 10_000 + 3600])
                    try db.execute(sql: "INSERT INTO stage_blocks (session_id, stage, start_time, end_time) VALUES (?, 'deep', ?, ?)",
                                   arguments: [id, id * 10_000, id * 10_000 + 600])
                    try db.execute(sql: "INSERT INTO epochs (session_id, start_time, stage) VALUES (?, ?, 'deep')", arguments: [id, id * 10_000])
                }
                try db.execute(sql: """
                    INSERT INTO outbox (session_id, event_type, status, attempts, next_attempt_at, last_error, created_at, updated_at)
                    VALUES (1, 'sleep_session', 'failed', 1, 0, 'HTTP 400: bad stage', 0, 0),
                           (2, 'sleep_session', 'in_flight', 2, 0, NULL, 0, 0)
                    """)
            }
            try queue.close()
        }
        let store = try NightStore(path: path, timeZone: TimeZone(identifier: "UTC")!, clock: ManualClock(1_000_000))
        #expect(try await store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "presence_power_changes", "presence_power_sides"])
        #expect(try await store.sessionCount() == 2)
        let first = try #require(try await store.session(sourceID: "podbridge:PB-OLD:left:10000"))
        #expect(first.syncStatus == .failed)
        #expect(first.syncError == "HTTP 400: bad stage")
        #expect(first.metrics.score == 70)
        #expect(try await store.blocks(sessionID: 1).map(\.stage) == [.inBed, .deep])
        let values = try await store.pool.read { db in try Int.fetchAll(db, sql: "SELECT health_value FROM stage_blocks ORDER BY id") }
        #expect(values == [0, 4, 0, 4])
        // The v1 worker's unfinished post is due again, not stuck.
        let events = try await store.outboxEvents()
        #expect(events.map(\.status) == [.failed, .pending])
        let claim = try #require(try await store.claimNextDueEvent(leaseSeconds: 60))
        #expect(claim.session.sourceID == "podbridge:PB-OLD:left:20000")
        #expect(claim.attempt == 3)
        // The schedule tables added since v1 work on the migrated file.
        let manual = ManualScheduleRecord(podSerial: "PB-OLD", side: .left, weekdayBedtime: "22:15", weekdayWake: "06:30",
                                          weekendBedtime: "23:00", weekendWake: "08:00", setAt: 1_000_000)
        try await store.setManualSchedule(manual)
        #expect(try await store.manualSchedule(podSerial: "PB-OLD", side: .left) == manual)
        #expect(try await store.integrityCheck() == ["ok"])
    }

    @Test func v4DropsTheUnusedV2ScheduleTablesAndKeepsSessions() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("v3.sqlite")
        // A database as the v3 release left it, with rows in v2's schedule tables.
        do {
            let queue = try DatabaseQueue(path: path)
            try StoreMigrations.migrator.migrate(queue, upTo: "v3")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO pods VALUES ('PB-V3', '1.0.0', 100, 200)")
                try db.execute(sql: """
                    INSERT INTO sessions (id, source_id, pod_serial, side, start_time, end_time, wake_date, time_zone,
                        is_final, time_in_bed_min, total_sleep_min, efficiency, onset_latency_min, waso_min, awakenings,
                        awake_min, core_min, deep_min, rem_min, awake_pct, core_pct, deep_pct, rem_pct,
                        mean_hr, mean_hrv, mean_br, score, analyzed_at, sync_status, backend_session_id)
                    VALUES (1, 'podbridge:PB-V3:right:10000', 'PB-V3', 'right', 10000, 13600, '1970-01-01', 'UTC', 1,
                        60, 50, 83.3, 5, 5, 1, 10, 30, 10, 10, 16.7, 50, 16.7, 16.7, 60, NULL, 14, 70, 300, 'synced', 'b-7')
                    """)
                try db.execute(sql: "INSERT INTO stage_blocks (session_id, stage, health_value, start_time, end_time) VALUES (1, 'in_bed', 0, 10000, 13600)")
                try db.execute(sql: "INSERT INTO epochs (session_id, start_time, stage, heart_rate) VALUES (1, 10000, 'core', 57.5)")
                try db.execute(sql: """
                    INSERT INTO schedule_in_force (pod_serial, side, power_on, power_off, weekday_mask, source, time_zone, set_at)
                    VALUES ('PB-V3', 'left', '22:00', '07:00', 127, 'manual', 'UTC', 50)
                    """)
                try db.execute(sql: """
                    INSERT INTO schedule_history (pod_serial, side, power_on, power_off, weekday_mask, source, time_zone, set_at)
                    VALUES ('PB-V3', 'left', '22:00', '07:00', 127, 'manual', 'UTC', 50)
                    """)
            }
            try queue.close()
        }
        let store = try NightStore(path: path, timeZone: TimeZone(identifier: "UTC")!)
        #expect(try await store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "presence_power_changes", "presence_power_sides"])
        let tables = try await store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'schedule_%' ORDER BY name")
        }
        #expect(tables == ["schedule_pushes"])
        #expect(try await store.sessionCount() == 1)
        let session = try #require(try await store.session(sourceID: "podbridge:PB-V3:right:10000"))
        #expect(session.syncStatus == .synced && session.backendSessionID == "b-7" && session.isFinal)
        #expect(session.metrics.meanHRV == nil && session.metrics.score == 70)
        #expect(try await store.blocks(sessionID: session.id) == [StageBlock(stage: .inBed, start: 10000, end: 13600)])
        #expect(try await store.epochs(sessionID: session.id) == [EpochRecord(start: 10000, stage: .core, heartRate: 57.5)])
        #expect(try await store.pods().map(\.serial) == ["PB-V3"])
        #expect(try await store.integrityCheck() == ["ok"])
    }

    @Test func v5AddsSmartWakeToAVersion4FileKeepingItsSchedule() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("v4.sqlite")
        // A database as the v4 release left it: a pod, a manual schedule, an alarm event.
        do {
            let queue = try DatabaseQueue(path: path)
            try StoreMigrations.migrator.migrate(queue, upTo: "v4")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO pods VALUES ('PB-V4', '1.1.0', 100, 200)")
                try db.execute(sql: """
                    INSERT INTO manual_schedule VALUES ('PB-V4', 'left', '22:30', '07:00', '23:00', '08:00', 150)
                    """)
                try db.execute(sql: """
                    INSERT INTO pod_events (pod_serial, at, kind, side, argument, description)
                    VALUES ('PB-V4', 160, 'alarm_started', 'left', 60, 'alarm fired on the pod (left) at 07:00, intensity 60%')
                    """)
            }
            try queue.close()
        }
        let store = try NightStore(path: path, timeZone: TimeZone(identifier: "UTC")!)
        #expect(try await store.appliedMigrations() == StoreMigrations.versions)
        #expect(try await store.manualSchedule(podSerial: "PB-V4", side: .left)?.weekdayWake == "07:00")
        #expect(try await store.podEvents(podSerial: "PB-V4").count == 1)
        // Nothing set: the configuration applies; then a window set for the side.
        #expect(try await store.wakeSettings(podSerial: "PB-V4", side: .left) == nil)
        let settings = WakeSettingsRecord(podSerial: "PB-V4", side: .left, windowMinutes: 30, untilOutOfBed: true, setAt: 300)
        try await store.setWakeSettings(settings)
        #expect(try await store.wakeSettings(podSerial: "PB-V4", side: .left) == settings)
        await #expect(throws: StoreError.self) {
            try await store.setWakeSettings(WakeSettingsRecord(podSerial: "PB-V4", side: .left, windowMinutes: 121,
                                                               untilOutOfBed: false, setAt: 300))
        }
        // A wake record: inserted, then updated in place by its window end.
        let day = try #require(CalendarDay(year: 2026, month: 11, day: 17))
        var record = WakeRecord(podSerial: "PB-V4", side: .left, wakeDate: day, windowStart: 1_794_900_600,
                                windowEnd: 1_794_902_400, windowMinutes: 30)
        let id = try await store.saveWakeRecord(record)
        record.id = id
        record.decidedAt = 1_794_901_500
        record.reason = "light_sleep"
        record.stage = .core
        record.stageProbability = 0.8
        record.movement = 1.2
        record.heartRateRise = 4
        record.minutesBeforeEnd = 15
        record.triggered = true
        record.firedAt = 1_794_901_501
        record.repeats = 1
        record.snoozes = 2
        record.outOfBedAt = 1_794_901_900
        record.returnsToBed = 1
        #expect(try await store.saveWakeRecord(record) == id)
        #expect(try await store.wakeRecords(wakeDate: day, side: .left) == [record])
        #expect(try await store.wakeRecords(wakeDate: day, side: .right).isEmpty)
        #expect(try await store.wakeRecords(podSerial: "PB-V4") == [record])
        #expect(try await store.integrityCheck() == ["ok"])
    }

    @Test func v6TurnsTheHubsEfficiencyFractionsIntoPercentages() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("v5.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try StoreMigrations.migrator.migrate(queue, upTo: "v5")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO pods VALUES ('PB-V5', '1.0.0', 100, 200)")
                // Night 1 as the hub stored it (a fraction), night 2 already in percent.
                for (id, efficiency) in [(1, 0.875), (2, 83.3)] {
                    try db.execute(sql: """
                        INSERT INTO sessions (id, source_id, pod_serial, side, start_time, end_time, wake_date, time_zone,
                            is_final, time_in_bed_min, total_sleep_min, efficiency, onset_latency_min, waso_min, awakenings,
                            awake_min, core_min, deep_min, rem_min, awake_pct, core_pct, deep_pct, rem_pct,
                            mean_hr, mean_hrv, mean_br, score, analyzed_at, sync_status, backend_session_id)
                        VALUES (?, ?, 'PB-V5', 'left', ?, ?, '1970-01-01', 'UTC', 1,
                            60, 50, ?, 5, 5, 1, 10, 30, 10, 10, 16.7, 50, 16.7, 16.7, 60, NULL, 14, 70, 300, 'pending', NULL)
                        """, arguments: [id, "podbridge:PB-V5:left:\(id)", id * 10000, id * 10000 + 3600, efficiency])
                }
            }
            try queue.close()
        }
        let store = try NightStore(path: path, timeZone: TimeZone(identifier: "UTC")!)
        let efficiencies = try await store.allSessions(side: .left).sorted { $0.start < $1.start }.map(\.metrics.efficiency)
        #expect(efficiencies == [87.5, 83.3])
    }

    @Test func v9KeepsAVersion8WakeRecordWithNoReturnsToBed() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("v8.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try StoreMigrations.migrator.migrate(queue, upTo: "v8")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO pods VALUES ('PB-V8', '1.0.0', 100, 200)")
                try db.execute(sql: """
                    INSERT INTO wake_records (pod_serial, side, wake_date, window_start, window_end, window_minutes,
                        fired_at, repeats, snoozes, out_of_bed_at)
                    VALUES ('PB-V8', 'left', '2026-11-17', 1794900600, 1794902400, 30, 1794902400, 1, 0, 1794902500)
                    """)
            }
            try queue.close()
        }
        let store = try NightStore(path: path, timeZone: TimeZone(identifier: "UTC")!)
        let day = try #require(CalendarDay(year: 2026, month: 11, day: 17))
        let records = try await store.wakeRecords(wakeDate: day, side: .left)
        #expect(records.map(\.outOfBedAt) == [1_794_902_500] && records.map(\.returnsToBed) == [0] && records.map(\.repeats) == [1])
    }

    @Test func refusesADatabaseFromANewerRelease() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("new.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            var migrator = StoreMigrations.migrator
            migrator.registerMigration("v99") { db in try db.execute(sql: "CREATE TABLE future (x)") }
            try migrator.migrate(queue)
            try queue.close()
        }
        #expect(throws: StoreError.newerSchema(unknown: ["v99"])) { try NightStore(path: path) }
    }

    @Test func aFileThatIsNoDatabaseIsNamedAndLeftAsItWas() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("notes.txt")
        let text = Data("not a database, but somebody's notes\n".utf8)
        try text.write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.notADatabase(path: path)) { try NightStore(path: path) }
        #expect(throws: StoreError.notADatabase(path: path)) { try NightStore.openExisting(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == text)
    }

    @Test func anotherApplicationsDatabaseIsNamedAndLeftAsItWas() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("contacts.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada')")
            }
            try queue.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StoreError.foreignDatabase(path: path, tables: ["contacts"])) { try NightStore(path: path) }
        #expect(throws: StoreError.foreignDatabase(path: path, tables: ["contacts"])) { try NightStore.openExisting(path: path) }
        // Not a byte changed, not switched to WAL, no podbridge table added.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(StoreError.foreignDatabase(path: path, tables: ["contacts"]).description.contains("give --db a file of its own"))

        // An empty file is an empty database, and becomes a store.
        let empty = dir.path("empty.sqlite")
        try #require(FileManager.default.createFile(atPath: empty, contents: nil), "could not create \(empty)")
        let store = try NightStore(path: empty)
        #expect(try await store.allSessions(side: .left).isEmpty)
        try store.close()
    }

    @Test func aDatabaseInADirectoryThatIsNotThereCannotBeOpenedAndSaysSo() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("missing/podbridge.sqlite")
        #expect {
            try NightStore(path: path)
        } throws: { error in
            guard case let .cannotOpen(p, reason) = error as? StoreError else { return false }
            return p == path && !reason.isEmpty
        }
    }

    /// A state directory that cannot be made (here: under a file; for a user, where they may
    /// not write) said NSCocoaErrorDomain Code=… with a dictionary; now a sentence.
    @Test func aDirectoryThatCannotBeMadeSaysWhichAndWhyInWords() throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let file = dir.path("a-file")
        try #require(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)), "could not create \(file)")
        let error = #expect(throws: StoreError.self) { try NightStore.createDirectory(containing: file + "/state/podbridge.sqlite") }
        #expect(error?.description == "cannot create the directory \(file)/state: Not a directory", "\(String(describing: error))")
    }

    @Test func openExistingRefusesAMissingFile() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("absent.sqlite")
        #expect(throws: StoreError.missingDatabase(path: path)) { try NightStore.openExisting(path: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
