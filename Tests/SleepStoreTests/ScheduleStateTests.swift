import Foundation
import Testing
import SleepDomain
@testable import SleepStore

/// The schedule service's tables (migration v3) on a real SQLite file.
@Suite struct ScheduleStateTests {
    @Test func scheduleInForceChangesOnlyWhenTheScheduleOrOriginChanges() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        var state = PodScheduleState(podSerial: "PB-S", side: .left, origin: .default, scheduleJSON: #"{"a":1}"#,
                                     summary: "power 22:00→07:30", reason: "too few nights", timeZoneID: "Europe/Berlin",
                                     setAt: 100)
        #expect(try await store.setPodSchedule(state))
        try await store.markPodScheduleAcknowledged(podSerial: "PB-S", side: .left, at: 110)
        #expect(try await store.podSchedule(podSerial: "PB-S", side: .left)?.acknowledgedAt == 110)
        // Same schedule, new reason: not a change, the acknowledgement stands, the reason is updated.
        state.reason = "still too few nights"
        #expect(try await !store.setPodSchedule(state))
        let kept = try #require(try await store.podSchedule(podSerial: "PB-S", side: .left))
        #expect(kept.reason == "still too few nights")
        #expect(kept.acknowledgedAt == 110)
        // Another schedule: a change, not acknowledged yet.
        state.scheduleJSON = #"{"a":2}"#
        state.origin = .inferred
        state.setAt = 200
        #expect(try await store.setPodSchedule(state))
        let changed = try #require(try await store.podSchedule(podSerial: "PB-S", side: .left))
        #expect(changed.origin == .inferred)
        #expect(changed.acknowledgedAt == nil)
        #expect(changed.setAt == 200)
        #expect(try await store.podSchedule(podSerial: "PB-S", side: .right) == nil)
    }

    @Test func presencePowerSidesKeepTheOwnersChoiceAndTheEmptyNightsApart() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("hub.sqlite")
        var settings = PresencePowerSettings()
        settings.away = true
        settings.offWhenLeftMinutes = 25
        do {
            let store = try NightStore(path: path)
            #expect(try await store.presencePowerSide(podSerial: "PB-P", side: .left) == nil)
            try await store.savePresencePowerEmptyNights(podSerial: "PB-P", side: .left, count: 2, at: 90)
            try await store.savePresencePowerChoice(podSerial: "PB-P", side: .left, enabled: true, settings: settings,
                                                    resetEmptyNights: false, at: 100)
            // Only the count for the other side: its switch and rules stay the configuration's.
            try await store.savePresencePowerEmptyNights(podSerial: "PB-P", side: .right, count: 1, at: 100)
            await #expect(throws: StoreError.self) {
                try await store.savePresencePowerEmptyNights(podSerial: "PB-P", side: .right, count: -1, at: 101)
            }
        }
        let reopened = try NightStore(path: path)
        let left = try #require(try await reopened.presencePowerSide(podSerial: "PB-P", side: .left))
        #expect(left.enabled == true)
        #expect(left.settings == settings)
        #expect(left.emptyNights == 2)
        #expect(left.setAt == 100)
        let right = try #require(try await reopened.presencePowerSide(podSerial: "PB-P", side: .right))
        #expect(right.enabled == nil)
        #expect(right.settings == nil)
        #expect(right.emptyNights == 1)
        // A new count keeps the choice; a new choice keeps the count unless it resets it.
        try await reopened.savePresencePowerEmptyNights(podSerial: "PB-P", side: .left, count: 3, at: 150)
        #expect(try await reopened.presencePowerSide(podSerial: "PB-P", side: .left)?.settings == settings)
        try await reopened.savePresencePowerChoice(podSerial: "PB-P", side: .left, enabled: false, settings: nil,
                                                   resetEmptyNights: false, at: 200)
        #expect(try await reopened.presencePowerSide(podSerial: "PB-P", side: .left)?.emptyNights == 3)
        try await reopened.savePresencePowerChoice(podSerial: "PB-P", side: .left, enabled: nil, settings: nil,
                                                   resetEmptyNights: true, at: 210)
        let reset = try #require(try await reopened.presencePowerSide(podSerial: "PB-P", side: .left))
        #expect(reset.emptyNights == 0)
        #expect(reset.enabled == nil)
        #expect(reset.setAt == 210)
    }

    @Test func manualScheduleIsSetReplacedClearedAndValidated() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"))
        let manual = ManualScheduleRecord(podSerial: "PB-M", side: .right, weekdayBedtime: "22:45", weekdayWake: "06:15",
                                          weekendBedtime: "23:30", weekendWake: "08:30", setAt: 5)
        try await store.setManualSchedule(manual)
        #expect(try await store.manualSchedule(podSerial: "PB-M", side: .right) == manual)
        #expect(try await store.manualSchedule(podSerial: "PB-M", side: .left) == nil)
        var later = manual
        later.weekdayWake = "06:45"
        try await store.setManualSchedule(later)
        #expect(try await store.manualSchedule(podSerial: "PB-M", side: .right)?.weekdayWake == "06:45")
        var bad = manual
        bad.weekendWake = "8:30"
        await #expect(throws: StoreError.self) { try await store.setManualSchedule(bad) }
        #expect(try await store.clearManualSchedule(podSerial: "PB-M", side: .right))
        #expect(try await !store.clearManualSchedule(podSerial: "PB-M", side: .right))
        #expect(try await store.manualSchedule(podSerial: "PB-M", side: .right) == nil)
    }

    @Test func pushHistoryAndPodEventsKeepOrderAndAnswersAcrossReopen() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let path = dir.path("hub.sqlite")
        do {
            let store = try NightStore(path: path)
            try await store.recordSchedulePush(SchedulePushRecord(podSerial: "PB-P", sentAt: 10, command: "set-alarm(left)",
                                                            description: "left alarm 07:00", attempt: 1, outcome: .nack,
                                                            status: "busy", detail: "pod refused"))
            try await store.recordSchedulePush(SchedulePushRecord(podSerial: "PB-P", sentAt: 15, command: "set-alarm(left)",
                                                            description: "left alarm 07:00", attempt: 2, outcome: .ack))
            try await store.recordSchedulePush(SchedulePushRecord(podSerial: "PB-P", sentAt: 20, command: "set-clock",
                                                            description: "clock UTC", attempt: 1, outcome: .timeout))
            await #expect(throws: StoreError.self) {
                try await store.recordSchedulePush(SchedulePushRecord(podSerial: "PB-P", sentAt: 1, command: "set-clock",
                                                                description: "", attempt: 0, outcome: .ack))
            }
            try await store.recordPodEvent(PodEventRecord(podSerial: "PB-P", at: 25_200, kind: "alarm_started", side: .left,
                                                    argument: 60, description: "alarm fired on the pod (left) at 07:00"))
            try await store.recordPodEvent(PodEventRecord(podSerial: "PB-P", at: 25_320, kind: "alarm_stopped", side: .left,
                                                    argument: 0, description: "stopped"))
            try store.close()
        }
        let store = try NightStore.openExisting(path: path)
        let pushes = try await store.schedulePushes(podSerial: "PB-P")
        #expect(pushes.map(\.outcome) == [.nack, .ack, .timeout])
        #expect(pushes[0].status == "busy")
        #expect(pushes[1].attempt == 2)
        #expect(try await store.schedulePushes(podSerial: "PB-P", limit: 1).map(\.command) == ["set-clock"])
        let events = try await store.podEvents(podSerial: "PB-P")
        #expect(events.map(\.kind) == ["alarm_started", "alarm_stopped"])
        #expect(events[0].side == .left && events[0].argument == 60 && events[0].at == 25_200)
        #expect(try await store.pods().map(\.serial) == ["PB-P"])
    }

    /// A wake window ending after midnight (22:10–00:10) whose sleeper was up before midnight:
    /// the night's wake date is the day before the record's, and the night still finds it (the
    /// API, the dashboard and the console showed no smart wake for it).
    @Test func aNightFindsTheWakeRecordOfAWindowEndingAfterItsDate() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        let night = try #require(CalendarDay(year: 2026, month: 12, day: 1))
        let midnight: Int64 = 1_796_169_600  // 2026-12-02T00:00Z
        let record = WakeRecord(podSerial: "PB-W", side: .right, wakeDate: night.adding(days: 1), windowStart: midnight - 110 * 60,
                                windowEnd: midnight + 10 * 60, windowMinutes: 120)
        _ = try await store.saveWakeRecord(record)
        // The night 21:10–23:10 on the 1st: the window had opened (22:10) before it ended.
        #expect(try await store.wakeRecord(podSerial: "PB-W", side: .right, wakeDate: night, nightEnd: midnight - 50 * 60)?.windowEnd
                == record.windowEnd)
        // A night that ended before the window opened, another pod's, the other side's: none.
        #expect(try await store.wakeRecord(podSerial: "PB-W", side: .right, wakeDate: night, nightEnd: midnight - 200 * 60) == nil)
        #expect(try await store.wakeRecord(podSerial: "PB-X", side: .right, wakeDate: night, nightEnd: midnight - 50 * 60) == nil)
        #expect(try await store.wakeRecord(podSerial: "PB-W", side: .left, wakeDate: night, nightEnd: midnight - 50 * 60) == nil)
        // The night of the record's own date finds it as before.
        #expect(try await store.wakeRecord(podSerial: "PB-W", side: .right, wakeDate: night.adding(days: 1), nightEnd: midnight + 7 * 3600)
                != nil)
    }
}
