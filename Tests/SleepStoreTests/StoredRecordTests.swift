import Foundation
import GRDB
import Testing
import SleepDomain
@testable import SleepStore

/// The store's records are its rows (`Records.swift`): what each writes in its table's columns,
/// and that reading gives back what was written, nil included.
@Suite struct StoredRecordTests {
    private func columns(_ store: NightStore, _ sql: String) async throws -> [String: String] {
        try await store.read { db in
            guard let row = try Row.fetchOne(db, sql: sql) else { return [:] }
            var values: [String: String] = [:]
            for (name, value) in row {
                values[name] = switch value.storage {
                case .null: "NULL"
                case .int64(let n): "\(n)"
                case .double(let x): "\(x)"
                case .string(let text): text
                case .blob(let data): "\(data.count) bytes"
                }
            }
            return values
        }
    }

    /// A wake record saved again for its window with the values it no longer has (back in
    /// bed: no exit, no stage, no trigger error) reads them as nil, not as the old ones.
    @Test func aWakeRecordSavedAgainClearsWhatItNoLongerHas() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        let day = try #require(CalendarDay(year: 2026, month: 11, day: 17))
        var record = WakeRecord(podSerial: "PB-W", side: .right, wakeDate: day, windowStart: 1_794_900_600,
                                windowEnd: 1_794_902_400, windowMinutes: 30, decidedAt: 1_794_901_500, reason: "arousal",
                                stage: .rem, stageProbability: 0.6, triggered: true, triggerError: "timeout",
                                firedAt: 1_794_901_501, repeats: 2, outOfBedAt: 1_794_901_900)
        record.id = try await store.saveWakeRecord(record)
        #expect(try await store.wakeRecords(podSerial: "PB-W") == [record])
        record.outOfBedAt = nil
        record.stage = nil
        record.triggerError = nil
        record.returnsToBed = 1
        #expect(try await store.saveWakeRecord(record) == record.id)
        #expect(try await store.wakeRecords(wakeDate: day, side: .right) == [record])
        let stored = try await columns(store, "SELECT out_of_bed_at, stage, trigger_error, returns_to_bed, triggered, side, wake_date FROM wake_records")
        #expect(stored == ["out_of_bed_at": "NULL", "stage": "NULL", "trigger_error": "NULL", "returns_to_bed": "1",
                           "triggered": "1", "side": "right", "wake_date": "2026-11-17"])
    }

    /// A wake record whose date does not read (the column has no CHECK) is passed over by the
    /// lists, and is still the one a save of its window replaces.
    @Test func aWakeRecordWhoseDateDoesNotReadIsPassedOverAndStillReplaced() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        try await store.recordPod(serial: "PB-W", firmware: nil, seenAt: 1)
        let id = try await store.write { db in
            try db.execute(sql: """
                INSERT INTO wake_records (pod_serial, side, wake_date, window_start, window_end, window_minutes)
                VALUES ('PB-W', 'left', 'someday', 100, 200, 0)
                """)
            return db.lastInsertedRowID
        }
        #expect(try await store.wakeRecords(podSerial: "PB-W").isEmpty)
        let day = try #require(CalendarDay(year: 2026, month: 11, day: 17))
        let record = WakeRecord(podSerial: "PB-W", side: .left, wakeDate: day, windowStart: 100, windowEnd: 200, windowMinutes: 0)
        #expect(try await store.saveWakeRecord(record) == id)
        #expect(try await store.wakeRecords(podSerial: "PB-W").map(\.id) == [id])
    }

    /// A night's rows hold what they always held: raw text for enumerations, the wake date as
    /// text, a flag as 0/1, all four probabilities or none, the block's Apple Health value, and
    /// an outbox event of the `sleep_session` type read with its session's source id.
    @Test func aNightsRowsHoldWhatTheyAlwaysHeld() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let clock = ManualClock(1_800_000_000)
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!, clock: clock)
        var night = Fixtures.night(side: .right, start: Fixtures.utc(2026, 11, 16, 23), stages: [(.core, 2), (.rem, 1)])
        night.epochs[1].probabilities = nil
        night.epochs[1].heartRate = nil
        let saved = try await store.save(night)
        let session = try #require(try await store.session(sourceID: night.sourceID))
        #expect(session.id == saved.sessionID && session.id > 0)
        #expect(try await store.epochs(sessionID: session.id) == night.epochs)
        let sessionColumns = try await columns(store, "SELECT side, wake_date, is_final, sync_status, backend_session_id FROM sessions")
        #expect(sessionColumns == ["side": "right", "wake_date": saved.wakeDate.description, "is_final": "1",
                                   "sync_status": "pending", "backend_session_id": "NULL"])
        let epoch = try await columns(store, "SELECT stage, p_awake, p_rem, heart_rate FROM epochs ORDER BY start_time LIMIT 1 OFFSET 1")
        #expect(epoch == ["stage": "core", "p_awake": "NULL", "p_rem": "NULL", "heart_rate": "NULL"])
        let block = try await columns(store, "SELECT stage, health_value FROM stage_blocks WHERE stage = 'rem'")
        #expect(block == ["stage": "rem", "health_value": "5"])
        let events = try await store.outboxEvents()
        #expect(events.map(\.sourceID) == [night.sourceID] && events.map(\.eventType) == ["sleep_session"])
        #expect(events.map(\.sessionID) == [session.id] && events.map(\.createdAt) == [1_800_000_000])
        let claim = try #require(try await store.claimNextDueEvent(leaseSeconds: 60))
        #expect(claim.eventID == events[0].eventID && claim.session == session && claim.attempt == 1)
        #expect(try await store.outboxEvents().map(\.claimedUntil) == [1_800_000_060])
    }

    /// Presence power changes and open stays keep their columns; the alarm switch reads on
    /// until switched off.
    @Test func smallerTablesHoldWhatTheyAlwaysHeld() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        let change = PresencePowerChange(podSerial: "PB-S", side: .left, at: 500, action: "hold", until: nil,
                                         reason: "still_in_bed", text: "kept on", outcome: "ack")
        try await store.recordPresencePowerChange(change)
        #expect(try await store.presencePowerChanges(podSerial: "PB-S") == [change])
        #expect(try await columns(store, "SELECT id, side, until FROM presence_power_changes")
                == ["id": "1", "side": "left", "until": "NULL"])
        #expect(try await store.alarmEnabled(podSerial: "PB-S", side: .right))
        try await store.setAlarmEnabled(podSerial: "PB-S", side: .right, enabled: false, at: 600)
        #expect(try await !store.alarmEnabled(podSerial: "PB-S", side: .right))
        #expect(try await columns(store, "SELECT side, enabled, set_at FROM alarm_switches")
                == ["side": "right", "enabled": "0", "set_at": "600"])
        try await store.keepOpenStay(podSerial: "PB-S", side: .right, lastSecond: 700, data: Data([1, 2]))
        #expect(try await store.keptOpenStays() == [KeptOpenStay(podSerial: "PB-S", side: .right, lastSecond: 700)])
        #expect(try await store.openStay(podSerial: "PB-S", side: .right) == Data([1, 2]))
        #expect(try await store.openStay(podSerial: "PB-S", side: .left) == nil)
    }
}
