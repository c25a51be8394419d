import TestSupport
import Foundation
import Hub
import PodDevice
import PodProtocol
import SleepSchedule
import SleepStore
import Testing
import VirtualPod
import SleepDomain

/// The schedule service against the virtual pod over a real pty, with a real PodConnection
/// and a real SQLite store (see `ScheduleRig`).
@Suite struct ScheduleDriverTests {
    static let initialCommands = ["set-clock", "set-power-schedule(left)", "set-power-schedule(right)",
                                  "set-alarm(left)", "set-alarm(right)"]

    func holds(_ pod: VirtualPod, _ side: BedSide, on: String, off: String, alarm: String?, days: UInt8 = 0x7F) -> Bool {
        guard let report = pod.currentSchedule(side: side), let power = report.power else { return false }
        guard power.on.description == on, power.off.description == off, power.days.rawValue == days else { return false }
        if let alarm { return report.alarm?.time.description == alarm }
        return report.alarm == nil
    }

    @Test func pushesOnConnectThenOnlyWhatChangedAndManualWinsUntilCleared() async throws {
        let rig = try await ScheduleRig(start: scheduleDate("Europe/Berlin", 2026, 6, 10, 12), speed: 1)
        let serial = rig.serial
        // No nights and no manual schedule: the default 22:30–07:00 → power 22:00→07:30, alarm 07:00.
        #expect(await eventually {
            await rig.driver.isInSync && holds(rig.pod, .left, on: "22:00", off: "07:30", alarm: "07:00")
                && holds(rig.pod, .right, on: "22:00", off: "07:30", alarm: "07:00")
        })
        #expect(try await rig.commands() == Self.initialCommands)
        #expect(try await rig.pushes().allSatisfy { $0.outcome == .ack && $0.attempt == 1 })
        // One SET_CLOCK reached the pod: the handshake's (issue 10 item 6).
        #expect(rig.pod.snapshot.appliedClocks.count == 1)
        #expect(await eventually { rig.reported.contains(
            "schedule left (default): power 22:00→07:30 (every day), alarm 07:00 rise 60% (every day) — pod acknowledged") })
        let left = try #require(try await rig.store.podSchedule(podSerial: serial, side: .left))
        #expect(left.origin == .default)
        #expect(left.acknowledgedAt != nil)

        // Nothing changed: nothing is sent.
        await rig.driver.sessionsChanged()
        #expect(try await rig.commands().count == 5)

        // A manual schedule on the left wins: only the left side's power and alarm go out.
        try await rig.store.setManualSchedule(ManualScheduleRecord(
            podSerial: serial, side: .left, weekdayBedtime: "23:00", weekdayWake: "06:30",
            weekendBedtime: "23:00", weekendWake: "06:30", setAt: 0))
        await rig.driver.sessionsChanged()
        #expect(try await Array(rig.commands().dropFirst(5)) == ["set-power-schedule(left)", "set-alarm(left)"])
        #expect(holds(rig.pod, .left, on: "22:30", off: "07:00", alarm: "06:30"))
        #expect(holds(rig.pod, .right, on: "22:00", off: "07:30", alarm: "07:00"))
        #expect(try await rig.store.podSchedule(podSerial: serial, side: .left)?.origin == .manual)
        await rig.driver.sessionsChanged()
        #expect(try await rig.commands().count == 7)

        // Five regular nights on the right (in bed 23:30, up 06:45): inferred, right side pushed.
        for day in 5...9 {
            try await storedNight(rig.store, serial: serial, side: .right, zone: "Europe/Berlin", wakeDay: (2026, 6, day),
                            bed: (23, 30), wake: (6, 45))
        }
        await rig.driver.sessionsChanged()
        #expect(try await Array(rig.commands().dropFirst(7)) == ["set-power-schedule(right)", "set-alarm(right)"])
        #expect(holds(rig.pod, .right, on: "23:00", off: "07:15", alarm: "06:45"))
        #expect(try await rig.store.podSchedule(podSerial: serial, side: .right)?.origin == .inferred)
        // The left keeps its manual schedule although nights exist only on the right.
        #expect(holds(rig.pod, .left, on: "22:30", off: "07:00", alarm: "06:30"))

        // Cleared: the left goes back to what inference gives (the default: it has no nights).
        #expect(try await rig.store.clearManualSchedule(podSerial: serial, side: .left))
        await rig.driver.sessionsChanged()
        #expect(try await Array(rig.commands().dropFirst(9)) == ["set-power-schedule(left)", "set-alarm(left)"])
        #expect(holds(rig.pod, .left, on: "22:00", off: "07:30", alarm: "07:00"))
        #expect(try await rig.store.podSchedule(podSerial: serial, side: .left)?.origin == .default)
        await rig.shutdown()
    }

    /// The service is the one owner of the schedule in force (issue 44 part 4): what it decided
    /// and stored is what the control side (the API, MQTT) reads; a manual schedule set through
    /// `HubControl` is decided and pushed by it; a pod it does not serve is decided on request,
    /// neither stored nor pushed.
    @Test func theServiceHoldsTheScheduleInForceThatTheSurfacesRead() async throws {
        let rig = try await ScheduleRig(start: scheduleDate("Europe/Berlin", 2026, 6, 10, 12), speed: 1)
        let serial = rig.serial
        #expect(await eventually { await rig.driver.isInSync })
        let control = HubControl(schedule: rig.driver)
        let first = await control.scheduleDecisions(podSerial: serial)
        let left = try #require(first[.left])
        #expect(left.origin == .default && first[.right]?.origin == .default)
        #expect(await rig.driver.scheduleInForce(side: .left) == left.schedule)
        let stored = try #require(try await rig.store.podSchedule(podSerial: serial, side: .left))
        let json = try left.schedule.storedJSON()
        #expect(stored.scheduleJSON == json && stored.reason == left.reason)

        let lines = try await control.setManualSchedule(podSerial: serial, sides: [.left], bedtime: "23:00", wake: "06:30")
        #expect(lines.contains { $0.hasPrefix("  the pod will hold: power 22:30→07:00") }, "\(lines)")
        let after = await control.scheduleDecisions(podSerial: serial)
        #expect(after[.left]?.origin == .manual)
        // What the inference alone gives is held beside the manual schedule (the API shows it).
        #expect(after[.left]?.inferredOnly.origin == .default && after[.left]?.inferredOnly.schedule == left.schedule)
        #expect(after[.right]?.schedule == first[.right]?.schedule)
        #expect(holds(rig.pod, .left, on: "22:30", off: "07:00", alarm: "06:30"))
        #expect(try await rig.store.podSchedule(podSerial: serial, side: .left)?.origin == .manual)

        let commands = try await rig.commands().count
        let away = await control.scheduleDecisions(podSerial: "VPOD-AWAY")
        #expect(away[.left]?.origin == .default && away[.right]?.origin == .default)
        #expect(try await rig.store.podSchedule(podSerial: "VPOD-AWAY", side: .left) == nil)
        #expect(try await rig.commands().count == commands)
        await rig.shutdown()
    }

    @Test func pushesEverythingAgainAfterAReconnect() async throws {
        let rig = try await ScheduleRig(serial: "VPOD-RECON", start: scheduleDate("Europe/Berlin", 2026, 6, 10, 12), speed: 1)
        #expect(await eventually { await rig.driver.isInSync && holds(rig.pod, .left, on: "22:00", off: "07:30", alarm: "07:00") })
        #expect(try await rig.commands() == Self.initialCommands)
        // Unplug: the pod goes away; a pod with the same serial comes back on the same link.
        rig.stopPod()
        #expect(await eventually { await !rig.driver.isInSync })
        let second = try rig.startPod()
        #expect(await eventually {
            await rig.driver.isInSync && holds(second, .left, on: "22:00", off: "07:30", alarm: "07:00")
                && holds(second, .right, on: "22:00", off: "07:30", alarm: "07:00")
        })
        #expect(try await rig.commands() == Self.initialCommands + Self.initialCommands)
        #expect(await eventually { await rig.connection.counters().reconnects >= 1 })
        await rig.shutdown()
    }

    @Test func pushesClockAndScheduleAgainAfterThePodRebootsWithItsClockReset() async throws {
        let rig = try await ScheduleRig(serial: "VPOD-BOOT", start: scheduleDate("Europe/Berlin", 2026, 6, 10, 12), speed: 1)
        #expect(await eventually { await rig.driver.isInSync && holds(rig.pod, .right, on: "22:00", off: "07:30", alarm: "07:00") })
        let firstBoot = rig.pod.snapshot.bootCount
        rig.pod.inject(.reboot(.watchdog))
        // Settled: the pod rebooted, holds the schedule again, and no round of pushes is half done.
        #expect(await eventually {
            let s = rig.pod.snapshot
            let count = (try? await rig.commands().count) ?? 0
            guard s.bootCount == firstBoot + 1, s.clock != nil, count >= 10, count % 5 == 0,
                  holds(rig.pod, .left, on: "22:00", off: "07:30", alarm: "07:00"),
                  holds(rig.pod, .right, on: "22:00", off: "07:30", alarm: "07:00") else { return false }
            return await rig.driver.isInSync
        })
        // Every start-up the connection runs after the reboot re-sends all of it, in order.
        let commands = try await rig.commands()
        #expect(commands.count >= 10 && commands.count % 5 == 0)
        for round in stride(from: 0, to: commands.count, by: 5) {
            #expect(Array(commands[round..<min(round + 5, commands.count)]) == Self.initialCommands)
        }
        #expect(try await rig.pushes().allSatisfy { $0.outcome == .ack })
        #expect(await eventually { rig.reported.contains("restarted (boot \(firstBoot + 1))") })
        // One start-up after the reboot, not two (issue 10 item 6).
        #expect(commands.count == 10)
        #expect(rig.pod.snapshot.appliedClocks.filter { $0.bootCount == firstBoot + 1 }.count == 1)
        // The pod's clock is the hub's again, in the pod zone's offset (CEST).
        let anchor = try #require(rig.pod.clock)
        #expect(anchor.utcOffsetMinutes == 120)
        #expect(abs(Double(anchor.unixMillis) / 1000 - rig.clock.now().timeIntervalSince1970) < 3600)
        await rig.shutdown()
    }

    /// A pod that loses its clock without a reset streams on and says so only in its status:
    /// the periodic GET_STATUS finds it and the clock is sent again at once, long before the
    /// alarm would fall due and fail (ALARM_FAILED 2 was the first the hub heard of it).
    @Test func aClockLostWithoutAResetIsSentAgainBeforeTheAlarm() async throws {
        let rig = try await ScheduleRig(serial: "VPOD-CLOCK", start: scheduleDate("Europe/Berlin", 2026, 6, 10, 23), speed: 1)
        #expect(await eventually { await rig.driver.isInSync && holds(rig.pod, .left, on: "22:00", off: "07:30", alarm: "07:00") })
        let boot = rig.pod.snapshot.bootCount
        let clocksBefore = rig.pod.snapshot.appliedClocks.count
        rig.pod.inject(.clockLoss)
        #expect(await eventually { rig.pod.snapshot.appliedClocks.count > clocksBefore && rig.pod.clock != nil },
                "the clock was never sent again; the hub said \(rig.reported.all.suffix(8))")
        #expect(rig.pod.snapshot.bootCount == boot)
        // The alarm the pod kept through the loss still stands, in the pod zone's time.
        #expect(holds(rig.pod, .left, on: "22:00", off: "07:30", alarm: "07:00"))
        let anchor = try #require(rig.pod.clock)
        #expect(abs(Double(anchor.unixMillis) / 1000 - rig.clock.now().timeIntervalSince1970) < 60)
        await rig.shutdown()
    }

    @Test func aPodThatResetsInsideItsPowerWindowIsSwitchedOnAgain() async throws {
        // 23:00 in Berlin: inside the default 22:00–07:30 window. Schedules are edge-triggered
        // (firmware-protocol.md §7.4): after a reset the pod would stay off until tomorrow.
        let rig = try await ScheduleRig(serial: "VPOD-MIDWIN", start: scheduleDate("Europe/Berlin", 2026, 6, 10, 23), speed: 1)
        #expect(await eventually { await rig.driver.isInSync && rig.pod.snapshot.powerOn == [true, true] })
        let firstBoot = rig.pod.snapshot.bootCount
        rig.pod.inject(.reboot(.watchdog))
        #expect(await eventually {
            let s = rig.pod.snapshot
            guard s.bootCount == firstBoot + 1, s.clock != nil, s.powerOn == [true, true] else { return false }
            return await rig.driver.isInSync
        }, "the pod stayed off after its reset mid-window")
        let commands = try await rig.commands()
        #expect(commands.filter { $0 == "set-power(left)" }.count == 2 && commands.filter { $0 == "set-power(right)" }.count == 2,
                "\(commands)")
        await rig.shutdown()
    }

    @Test func prePushesBeforeADSTTransitionAndResyncsTheClockAtIt() async throws {
        // New York springs forward on 2026-03-08 at 07:00 UTC (02:00 EST → 03:00 EDT).
        let transition = Date(timeIntervalSince1970: 1_772_953_200)
        #expect(TimeZone(identifier: "America/New_York")!.nextDaylightSavingTimeTransition(after: transition - 3600) == transition)
        let lead = 300.0
        let rig = try await ScheduleRig(serial: "VPOD-DST", zone: "America/New_York",
                                        // 35 simulated minutes (21 s of real time) to connect before the
                                        // pre-push window, even on a heavily loaded machine.
                                        start: transition.addingTimeInterval(-2400), speed: 100,
                                        configure: { $0.schedule.push.preTransitionLeadSeconds = lead })
        #expect(await eventually {
            (try? await rig.pushes().contains { $0.command == "set-clock" && $0.description.contains("UTC−04:00") && $0.outcome == .ack })
                ?? false
        })
        #expect(await eventually { rig.pod.clock?.utcOffsetMinutes == -240 })
        let pushes = try await rig.pushes()
        let t = Int64(transition.timeIntervalSince1970)
        let initial = pushes.filter { $0.sentAt < t - Int64(lead) }
        let prePush = pushes.filter { $0.sentAt >= t - Int64(lead) && $0.sentAt < t }
        let after = pushes.filter { $0.sentAt >= t }
        // 01:20 local is inside the 22:00–07:30 window, so the start-up also switches the sides on
        // (schedules are edge-triggered, §7.4); the pre-push does not repeat that.
        let insideWindow = ["set-clock", "set-power-schedule(left)", "set-power-schedule(right)",
                            "set-power(left)", "set-power(right)", "set-alarm(left)", "set-alarm(right)"]
        #expect(initial.map(\.command) == insideWindow, "the pod must connect before the pre-push window")
        #expect(initial.first?.description.contains("UTC−05:00") == true)
        #expect(prePush.map(\.command) == Array(Self.initialCommands.dropFirst()))
        #expect(after.map(\.command).first == "set-clock")
        #expect(pushes.allSatisfy { $0.outcome == .ack })
        #expect(await eventually { rig.reported.contains("pod clock: clock America/New_York UTC−04:00 — pod acknowledged") })
        await rig.shutdown()
    }

    @Test func theAlarmFiresOnThePodAtThePushedTimeAndTheHubRecordsIt() async throws {
        let serial = "VPOD-ALARM"
        let rig = try await ScheduleRig(
            // 30 simulated minutes (15 s of real time) to push the alarm before it is due.
            serial: serial, start: scheduleDate("Europe/Berlin", 2026, 6, 10, 6, 30), speed: 120,
            beforeStart: { store in
                for side in BedSide.allCases {
                    try await store.setManualSchedule(ManualScheduleRecord(
                        podSerial: serial, side: side, weekdayBedtime: "23:00", weekdayWake: "07:00",
                        weekendBedtime: "23:00", weekendWake: "07:00", setAt: 0))
                }
            })
        #expect(await eventually {
            let kinds = (try? await rig.store.podEvents(podSerial: serial).map { "\($0.kind) \($0.side?.rawValue ?? "")" }) ?? []
            return ["alarm_started left", "alarm_started right", "alarm_stopped left", "alarm_stopped right"]
                .allSatisfy(kinds.contains)
        })
        let events = try await rig.store.podEvents(podSerial: serial)
        let started = try #require(events.first { $0.kind == "alarm_started" && $0.side == .left })
        let seven = scheduleDate("Europe/Berlin", 2026, 6, 10, 7)
        #expect(abs(Double(started.at) - seven.timeIntervalSince1970) <= 1)
        #expect(started.argument == 60)
        #expect(started.description == "alarm fired on the pod (left) at 07:00, intensity 60%")
        #expect(events.contains { $0.kind == "alarm_stopped" && $0.description.contains("after its duration") })
        #expect(await eventually { rig.reported.contains("alarm fired on the pod (right) at 07:00") })
        let fired = rig.pod.alarmsFired.filter { $0.outcome == .started }
        #expect(Set(fired.map(\.side)) == [.left, .right])
        #expect(fired.allSatisfy { $0.localTime?.description == "07:00" })
        await rig.shutdown()
    }

    /// The last line of defence, for a loss the status did not show in time (here: never asked).
    @Test func anAlarmThatFailsForAnInvalidClockIsRecordedAndTheClockIsSentAgain() async throws {
        let serial = "VPOD-CLOCK"
        let rig = try await ScheduleRig(
            // An hour of simulated time (18 s of real time) to push and lose the clock before 07:00.
            serial: serial, start: scheduleDate("Europe/Berlin", 2026, 6, 10, 6, 0), speed: 200, asksStatus: false,
            beforeStart: { store in
                try await store.setManualSchedule(ManualScheduleRecord(
                    podSerial: serial, side: .left, weekdayBedtime: "23:00", weekdayWake: "07:00",
                    weekendBedtime: "23:00", weekendWake: "07:00", setAt: 0))
            })
        #expect(await eventually { await rig.driver.isInSync })
        let before = try await rig.commands().count
        rig.pod.inject(.clockLoss)
        #expect(await eventually {
            (try? await rig.store.podEvents(podSerial: serial).contains { $0.kind == "alarm_failed" && $0.argument == 2 }) ?? false
        })
        #expect(await eventually {
            guard rig.pod.clock != nil else { return false }
            return (try? await rig.commands().count) ?? 0 > before
        })
        #expect(try await Array(rig.commands().dropFirst(before)).first == "set-clock")
        // The pod's clock is gone, so the hub times the event by its own clock on arrival:
        // the minute of 07:00, or the one before on a machine busy enough to lag.
        #expect(await eventually {
            rig.reported.contains("alarm on the pod (left) FAILED at 07:00")
                || rig.reported.contains("alarm on the pod (left) FAILED at 06:59")
        }, "\(rig.reported.all)")
        await rig.shutdown()
    }
}
