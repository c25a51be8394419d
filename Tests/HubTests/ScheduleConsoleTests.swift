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

    func makeStore(_ dir: ScheduleTempDir) throws -> NightStore {
        try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: zone)!)
    }

    @Test func inferExplainsNightsUsedDroppedMeanAndSpreadAcrossMidnight() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try makeStore(dir)
        // Bedtimes either side of midnight (23:50 / 00:10): the mean must be 00:00, not 12:00.
        // Weekday mornings (Mon 1 June … Tue 9 June, without the weekend).
        let nights = [(1, (23, 50)), (2, (0, 10)), (3, (23, 50)), (4, (0, 10)), (8, (23, 50)), (9, (0, 10))]
        for (day, bed) in nights {
            try await storedNight(store, serial: serial, side: .left, zone: zone, wakeDay: (2026, 6, day), bed: bed, wake: (7, 0))
        }
        // One wild night (in bed 04:00) is dropped as an outlier; a 40-minute afternoon nap is not a night.
        try await storedNight(store, serial: serial, side: .left, zone: zone, wakeDay: (2026, 6, 5), bed: (4, 0), wake: (11, 0))
        try await storedNight(store, serial: serial, side: .left, zone: zone, wakeDay: (2026, 6, 7), bed: (14, 0), wake: (14, 40))
        let console = ScheduleConsole(store: store, zone: TimeZone(identifier: zone)!,
                                      now: scheduleDate(zone, 2026, 6, 9, 12))
        #expect(try await console.resolvePod(nil) == serial)
        let text = try await console.infer(podSerial: serial, sides: [.left]).joined(separator: "\n")
        #expect(text.contains("left: 8 stored sessions"))
        #expect(text.contains("1 nap skipped"))
        #expect(text.contains("dropped as outliers: 2026-06-05"))
        #expect(text.contains("bedtime mean 00:00"))
        #expect(text.contains("wake mean 07:00"))
        #expect(text.contains("SD 10 min"))
        // Power on 30 min before 00:00, off 30 min after 07:00; alarm at 07:00.
        #expect(text.contains("the inference gives (inferred): power 23:30→07:30"))
        #expect(text.contains("alarm 07:00 rise 60%"))
        // infer changes nothing.
        #expect(try await store.podSchedule(podSerial: serial, side: .left) == nil)
        #expect(try await store.manualSchedule(podSerial: serial, side: .left) == nil)
    }

    @Test func showPutsItsMomentsInTheZoneItNamesAndSaysWhereTheSchedulesTimesAre() async throws {
        // A schedule made for Berlin, shown with --tz Asia/Kolkata: the header's zone holds for
        // every moment printed; the schedule's own HH:mm stay Berlin's, which is said.
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try makeStore(dir)
        let setAt = Int64(scheduleDate("UTC", 2026, 6, 9, 12).timeIntervalSince1970)  // 17:30 in Kolkata, 14:00 in Berlin
        _ = try await store.setPodSchedule(PodScheduleState(
            podSerial: serial, side: .left, origin: .manual, scheduleJSON: "{}", summary: "power 22:00→07:30",
            reason: "manual", timeZoneID: "Europe/Berlin", setAt: setAt))
        let kolkata = ScheduleConsole(store: store, zone: TimeZone(identifier: "Asia/Kolkata")!, now: Date(timeIntervalSince1970: Double(setAt)))
        let text = try await kolkata.show(podSerial: serial, sides: [.left]).joined(separator: "\n")
        #expect(text.contains("(times in Asia/Kolkata)") && text.contains("in force since 2026-06-09 17:30")
                && text.contains("its times are in Europe/Berlin"), "\(text)")
        let berlin = ScheduleConsole(store: store, zone: TimeZone(identifier: "Europe/Berlin")!, now: Date(timeIntervalSince1970: Double(setAt)))
        let same = try await berlin.show(podSerial: serial, sides: [.left]).joined(separator: "\n")
        #expect(same.contains("in force since 2026-06-09 14:00") && !same.contains("its times are in"), "\(same)")
    }

    @Test func setWinsInShowAndInferUntilClearedAndBadTimesAreRefused() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try makeStore(dir)
        let console = ScheduleConsole(store: store, zone: TimeZone(identifier: zone)!,
                                      now: scheduleDate(zone, 2026, 6, 9, 12))
        await #expect(throws: ScheduleServiceError.self) { try await console.resolvePod(nil) }
        let set = try await console.setManual(podSerial: serial, sides: [.right], bedtime: "22:45", wake: "06:15",
                                        weekendBedtime: "23:30", weekendWake: "08:30")
        #expect(set.joined(separator: "\n").contains("right: manual schedule set — weekday 22:45–06:15, weekend 23:30–08:30"))
        #expect(set.last?.contains("the pod will hold") == true)
        let manual = try #require(try await store.manualSchedule(podSerial: serial, side: .right))
        #expect(manual.weekendWake == "08:30")
        #expect(try await console.resolvePod(nil) == serial)

        let inferText = try await console.infer(podSerial: serial, sides: [.right]).joined(separator: "\n")
        #expect(inferText.contains("manual schedule set by the user wins until cleared"))
        #expect(inferText.contains("the inference gives (default): power 22:00→07:30 (every day)"))
        #expect(inferText.contains("in force instead: the manual schedule"))

        let show = try await console.show(podSerial: serial, sides: [.right]).joined(separator: "\n")
        #expect(show.contains("manual schedule set"))
        #expect(show.contains("weekday 22:45–06:15, weekend 23:30–08:30 (wins until cleared)"))
        #expect(show.contains("no schedule worked out yet"))

        await #expect(throws: ScheduleServiceError.self) {
            try await console.setManual(podSerial: serial, sides: [.left], bedtime: "25:00", wake: "07:00",
                                  weekendBedtime: nil, weekendWake: nil)
        }
        #expect(try await store.manualSchedule(podSerial: serial, side: .left) == nil)

        let cleared = try await console.clearManual(podSerial: serial, sides: [.right])
        #expect(cleared.first == "right: manual schedule cleared; back to default: power 22:00→07:30 (every day); alarm 07:00 rise 60% (every day)")
        #expect(try await store.manualSchedule(podSerial: serial, side: .right) == nil)
    }

    /// A mistyped `--pod` must not become a pod: once the store knows one, an unknown serial is
    /// refused (and stores nothing), so `--pod` does not turn required everywhere after.
    @Test func anUnknownSerialIsRefusedOnceAPodIsKnownAndStoresNothing() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try makeStore(dir)
        let console = ScheduleConsole(store: store, zone: TimeZone(identifier: zone)!, now: scheduleDate(zone, 2026, 6, 9, 12))
        // Before the hub ever ran, a schedule can be set up for the pod by its serial.
        await #expect(throws: ScheduleServiceError.self) { try await console.resolvePod(serial) }
        #expect(try await console.resolvePod(serial, settingUp: true) == serial)
        _ = try await console.setManual(podSerial: serial, sides: [.left], bedtime: "22:45", wake: "06:15",
                                        weekendBedtime: nil, weekendWake: nil)
        for settingUp in [false, true] {
            do {
                _ = try await console.resolvePod("NOPE", settingUp: settingUp)
                Issue.record("an unknown serial was taken")
            } catch {
                #expect(error.description == "pod NOPE is not known in this database (known: \(serial)); pass one of those to --pod")
            }
            await #expect(throws: ScheduleServiceError.self) { try await console.resolvePod("two words", settingUp: settingUp) }
        }
        #expect(try await store.pods().map(\.serial) == [serial])
        #expect(try await console.resolvePod(nil) == serial)
        #expect(try await console.resolvePod(serial) == serial)
    }
}

/// A hub left on UTC (as many Debian images ship) with a sleeper elsewhere: every time `show`
/// and `infer` print is the pod's, like the schedule's `HH:mm`. Kathmandu (UTC+05:45) is no
/// machine's zone by accident, so the system zone cannot pass for it.
@Suite struct ScheduleConsoleZoneTests {
    @Test func pushesAndAlarmEventsAreShownInThePodsZoneNotTheSystems() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        var settings = HubConfiguration.ScheduleSettings()
        settings.podTimeZone = "Asia/Kathmandu"
        let console = ScheduleConsole(store: store, settings: settings, now: scheduleDate("UTC", 2026, 6, 9, 12))
        let sent = Int64(scheduleDate("UTC", 2026, 6, 9, 0).timeIntervalSince1970)
        _ = try await store.recordSchedulePush(SchedulePushRecord(podSerial: "PB-ZONE", sentAt: sent, command: "set-alarm(left)",
                                                                  description: "left alarm 06:30 rise 60%", attempt: 1, outcome: .ack))
        // A power command (restored inside the window, or from the API) is a push like the others.
        _ = try await store.recordSchedulePush(SchedulePushRecord(podSerial: "PB-ZONE", sentAt: sent + 60, command: "set-power(left)",
                                                                  description: "left power on at 100%", attempt: 1, outcome: .ack))
        _ = try await store.recordPodEvent(PodEventRecord(podSerial: "PB-ZONE", at: sent + 1800, kind: "alarm_started", side: .left,
                                                          argument: 60, description: "alarm fired on the pod (left)"))
        let shown = try await console.show(podSerial: "PB-ZONE", sides: [.left])
        #expect(shown.first == "pod PB-ZONE (times in Asia/Kathmandu)")
        #expect(shown.contains("  2026-06-09 05:45 set-alarm(left) attempt 1: acknowledged — left alarm 06:30 rise 60%"), "\(shown)")
        #expect(shown.contains("  2026-06-09 05:46 set-power(left) attempt 1: acknowledged — left power on at 100%"), "\(shown)")
        #expect(shown.contains("  2026-06-09 06:15 alarm fired on the pod (left)"), "\(shown)")
        #expect(!shown.joined().contains("2026-06-09 00:"))
        let inferred = try await console.infer(podSerial: "PB-ZONE", sides: [.left])
        #expect(inferred.first == "pod PB-ZONE — inference at 2026-06-09 17:45 Asia/Kathmandu (nothing is changed)")
    }
}

/// The wake window per side: the configuration's until set for the pod side, then the stored one.
@Suite struct WakeSettingsConsoleTests {
    @Test func aWindowSetForASideOverridesTheConfigurationAndShowSaysSo() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("hub.sqlite"), timeZone: TimeZone(identifier: "UTC")!)
        var settings = HubConfiguration.ScheduleSettings()
        settings.podTimeZone = "UTC"
        settings.smartWake.right.windowMinutes = 20
        let console = ScheduleConsole(store: store, settings: settings, zone: TimeZone(identifier: "UTC")!,
                                      now: Date(timeIntervalSince1970: 1_794_866_400))
        try await store.recordPod(serial: "WAKE-CLI", firmware: nil, seenAt: 0)
        let before = await EffectiveWakeSettings.resolve(store: store, settings: settings, podSerial: "WAKE-CLI", side: .right)
        #expect(before.windowMinutes == 20 && before.source == "configuration" && !before.untilOutOfBed)
        let lines = try await console.setWake(podSerial: "WAKE-CLI", sides: [.left], windowMinutes: 30, untilOutOfBed: nil)
        #expect(lines == ["left: smart wake: 30-min window before the alarm"])
        let left = await EffectiveWakeSettings.resolve(store: store, settings: settings, podSerial: "WAKE-CLI", side: .left)
        #expect(left.windowMinutes == 30 && left.source == "set" && left.repeatAfterMinutes == 5 && left.maxRepeats == 3)
        // Only "until out of bed" changes: the window stays.
        _ = try await console.setWake(podSerial: "WAKE-CLI", sides: [.left], windowMinutes: nil, untilOutOfBed: true)
        let both = try #require(try await store.wakeSettings(podSerial: "WAKE-CLI", side: .left))
        #expect(both.windowMinutes == 30 && both.untilOutOfBed)
        await #expect(throws: ScheduleServiceError.self) {
            try await console.setWake(podSerial: "WAKE-CLI", sides: [.left], windowMinutes: 121, untilOutOfBed: nil)
        }
        let shown = try await console.show(podSerial: "WAKE-CLI", sides: [.left, .right]).joined(separator: "\n")
        #expect(shown.contains("wake: smart wake: 30-min window before the alarm, until out of bed (again after 5 min, at most 3 repeats) (set for this side)"), "\(shown)")
        #expect(shown.contains("wake: smart wake: 20-min window before the alarm (from the configuration)"))
    }

    @Test func theConfigurationRefusesAWindowOutsideItsRange() throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        func write(_ text: String) throws -> String {
            let path = dir.path("config-\(UUID().uuidString).json")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let bad = try write(#"{"schedule": {"smartWake": {"left": {"windowMinutes": 180}}}}"#)
        #expect(throws: ConfigurationError.self) { try HubConfiguration.load(path: bad) }
        let good = try write(#"{"schedule": {"smartWake": {"right": {"windowMinutes": 30, "untilOutOfBed": true}}}}"#)
        let config = try HubConfiguration.load(path: good)
        #expect(config.schedule.smartWake.right.windowMinutes == 30 && config.schedule.smartWake.right.untilOutOfBed)
        #expect(config.schedule.smartWake.left == HubConfiguration.SideWakeSettings())
    }
}
