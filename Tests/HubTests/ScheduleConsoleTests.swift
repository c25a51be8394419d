import Foundation
import Hub
import SleepSchedule
import SleepStore
import Testing
import SleepDomain

/// `podbridge schedule show|infer|set|clear` as library calls on a real SQLite file.
@Suite struct ScheduleConsoleTests {
    let zone = "Europe/Berlin"
    let serial = "PB-CLI"

    func makeStore(_ dir: ScheduleTempDir) throws -> SleepStore {
        try SleepStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: zone)!)
    }

    @Test func inferExplainsNightsUsedDroppedMeanAndSpreadAcrossMidnight() throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try makeStore(dir)
        // Bedtimes either side of midnight (23:50 / 00:10): the mean must be 00:00, not 12:00.
        // Weekday mornings (Mon 1 June … Tue 9 June, without the weekend).
        let nights = [(1, (23, 50)), (2, (0, 10)), (3, (23, 50)), (4, (0, 10)), (8, (23, 50)), (9, (0, 10))]
        for (day, bed) in nights {
            try storedNight(store, serial: serial, side: .left, zone: zone, wakeDay: (2026, 6, day), bed: bed, wake: (7, 0))
        }
        // One wild night (in bed 04:00) is dropped as an outlier; a 40-minute afternoon nap is not a night.
        try storedNight(store, serial: serial, side: .left, zone: zone, wakeDay: (2026, 6, 5), bed: (4, 0), wake: (11, 0))
        try storedNight(store, serial: serial, side: .left, zone: zone, wakeDay: (2026, 6, 7), bed: (14, 0), wake: (14, 40))
        let console = ScheduleConsole(store: store, zone: TimeZone(identifier: zone)!,
                                      now: scheduleDate(zone, 2026, 6, 9, 12))
        #expect(try console.resolvePod(nil) == serial)
        let text = try console.infer(podSerial: serial, sides: [.left]).joined(separator: "\n")
        #expect(text.contains("left: 8 stored sessions"))
        #expect(text.contains("1 naps skipped"))
        #expect(text.contains("dropped as outliers: 2026-06-05"))
        #expect(text.contains("bedtime mean 00:00"))
        #expect(text.contains("wake mean 07:00"))
        #expect(text.contains("SD 10 min"))
        // Power on 30 min before 00:00, off 30 min after 07:00; alarm at 07:00.
        #expect(text.contains("the inference gives (inferred): power 23:30→07:30"))
        #expect(text.contains("alarm 07:00 rise 60%"))
        // infer changes nothing.
        #expect(try store.podSchedule(podSerial: serial, side: .left) == nil)
        #expect(try store.manualSchedule(podSerial: serial, side: .left) == nil)
    }

    @Test func setWinsInShowAndInferUntilClearedAndBadTimesAreRefused() throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try makeStore(dir)
        let console = ScheduleConsole(store: store, zone: TimeZone(identifier: zone)!,
                                      now: scheduleDate(zone, 2026, 6, 9, 12))
        #expect(throws: ScheduleServiceError.self) { try console.resolvePod(nil) }
        let set = try console.setManual(podSerial: serial, sides: [.right], bedtime: "22:45", wake: "06:15",
                                        weekendBedtime: "23:30", weekendWake: "08:30")
        #expect(set.joined(separator: "\n").contains("right: manual schedule set — weekday 22:45–06:15, weekend 23:30–08:30"))
        #expect(set.last?.contains("next connect") == true)
        let manual = try #require(try store.manualSchedule(podSerial: serial, side: .right))
        #expect(manual.weekendWake == "08:30")
        #expect(try console.resolvePod(nil) == serial)

        let inferText = try console.infer(podSerial: serial, sides: [.right]).joined(separator: "\n")
        #expect(inferText.contains("manual schedule set by the user wins until cleared"))
        #expect(inferText.contains("the inference gives (default): power 22:00→07:30 (every day)"))
        #expect(inferText.contains("in force instead: the manual schedule"))

        let show = try console.show(podSerial: serial, sides: [.right]).joined(separator: "\n")
        #expect(show.contains("manual schedule set"))
        #expect(show.contains("weekday 22:45–06:15, weekend 23:30–08:30 (wins until cleared)"))
        #expect(show.contains("no schedule worked out yet"))

        #expect(throws: ScheduleServiceError.self) {
            try console.setManual(podSerial: serial, sides: [.left], bedtime: "25:00", wake: "07:00",
                                  weekendBedtime: nil, weekendWake: nil)
        }
        #expect(try store.manualSchedule(podSerial: serial, side: .left) == nil)

        let cleared = try console.clearManual(podSerial: serial, sides: [.right])
        #expect(cleared.first == "right: manual schedule cleared; back to default: power 22:00→07:30 (every day); alarm 07:00 rise 60% (every day)")
        #expect(try store.manualSchedule(podSerial: serial, side: .right) == nil)
    }
}
