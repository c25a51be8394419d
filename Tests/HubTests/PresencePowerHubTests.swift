import TestSupport
import Foundation
import Hub
import Logging
import NightModel
import PodDevice
import SleepDomain
import SleepStore
import Synchronization
import SystemCalls
import Testing
import VirtualPod

/// Presence-driven power end to end: the daemon against the virtual pod on a real pty, on a
/// simulated clock (200×); what is checked is the pod's own power log (`VirtualPod.powerLog`)
/// against when the night model had someone in the side. The night starts Monday 2026-11-16
/// 22:00 UTC; the left side's manual schedule sets its power window.
@Suite(.serialized) struct PresencePowerHubTests {
    static let nightStart = Date(timeIntervalSince1970: 1_794_866_400)  // 2026-11-16T22:00:00Z

    final class Rig: Sendable {
        let dir: ScheduleTempDir
        let pod: VirtualPod
        let daemon: HubDaemon
        let running: Task<Void, any Error>
        let lines: ReportedLines
        let heard: BusRecorder

        /// - Parameters: `wake`: the left side's wake (its power goes off 30 min later);
        ///   `outBeforeEnd`: seconds before the night's end the sleeper gets up.
        init(serial: String, hours: Double, outBeforeEnd: Double, bedtime: String = "22:00", wake: String,
             right: SideConfig = .empty, configure: (inout HubConfiguration) -> Void = { _ in },
             beforeStart: (NightStore) async throws -> Void = { _ in }) async throws {
            dir = try ScheduleTempDir()
            let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 120, getsOutBeforeEnd: outBeforeEnd, bathroomTrip: false))
            let night = NightConfig(seed: 46, duration: hours * 3600, sides: [sleeper, right], noise: .normal, channelsPerSide: 1)
            let timeline = PacedTimeline()
            pod = try VirtualPod(configuration: VirtualPodConfiguration(
                identity: PodIdentity(serial: serial), night: night, speed: 200,
                transmitQueueLimit: VirtualPodConfiguration.clockedTransmitQueue, timeline: timeline))
            let tty = try pod.start()
            var c = HubConfiguration()
            c.stateDirectory = dir.path("state")
            c.timeZone = "UTC"
            c.schedule.podTimeZone = "UTC"
            c.pod.path = tty
            c.api.enabled = false
            c.sessions.maxGapMinutes = 5
            c.schedule.presencePower.enabled = true
            configure(&c)
            try FileManager.default.createDirectory(atPath: c.stateDirectory, withIntermediateDirectories: true)
            do {
                let store = try NightStore(path: c.databasePath, timeZone: TimeZone(identifier: "UTC")!)
                try await store.setManualSchedule(ManualScheduleRecord(
                    podSerial: serial, side: .left, weekdayBedtime: bedtime, weekdayWake: wake,
                    weekendBedtime: bedtime, weekendWake: wake, setAt: 0))
                try await beforeStart(store)
                try store.close()
            }
            let lines = ReportedLines()
            self.lines = lines
            let reporter = HubReporter(logger: Logger(label: "presence-test") { _ in CapturingLogHandler(sink: lines) }, console: false)
            daemon = try await HubDaemon.assemble(configuration: c, clock: HubClock(start: PresencePowerHubTests.nightStart, speed: 200, timeline: timeline),
                                                  reporter: reporter)
            heard = BusRecorder(daemon.bus.subscribe(name: "test", bufferSize: 1 << 20))
            let daemon = self.daemon
            running = Task { try await daemon.run(stopSignals: nil) }
        }

        /// The pod's model clock has passed `date`.
        func podPassed(_ date: Date) -> Bool {
            guard let anchor = pod.clock else { return false }
            return anchor.unixTime(ofTick: pod.snapshot.tick) >= date.timeIntervalSince1970
        }

        /// When the model had someone in side `index`, in the pod's (and the hub's) time.
        func occupied(side index: Int) -> [DateInterval] {
            guard let truth = pod.groundTruth else { return [] }
            let clock = TruthClock(clocks: pod.snapshot.appliedClocks, nightStartUnix: PresencePowerHubTests.nightStart.timeIntervalSince1970)
            func at(_ s: Int) -> Date { Date(timeIntervalSince1970: clock.unixTime(simulatedSeconds: Double(s))) }
            var out: [DateInterval] = []
            var start: Int?
            let present = truth.sides[index].present
            for (s, p) in present.enumerated() {
                if p, start == nil { start = s }
                if !p, let b = start { out.append(DateInterval(start: at(b), end: at(s))); start = nil }
            }
            if let b = start { out.append(DateInterval(start: at(b), end: at(present.count))) }
            return out
        }

        /// The pod's power log for a side, as (time, on, cause).
        func log(_ side: BedSide) -> [(at: Date, on: Bool, cause: PowerChange.Cause)] {
            pod.powerLog.filter { $0.side == side }.compactMap { c in
                c.unixMillis.map { (Date(timeIntervalSince1970: Double($0) / 1000), c.on, c.cause) }
            }
        }

        /// Whether the side had power at `t` by the pod's log (it starts off).
        func powered(_ side: BedSide, at t: Date) -> Bool {
            log(side).last { $0.at <= t }?.on ?? false
        }

        var notices: [PresencePowerNotice] {
            heard.soFar.compactMap { if case .presencePower(let n) = $0 { n } else { nil } }
        }

        func stop() async {
            running.cancel()
            _ = await running.result
            pod.stop()
            dir.cleanup()
        }
    }

    /// Out of bed when the alarm rings at 00:30, half an hour before the scheduled off (01:00):
    /// the hub switches the side off ten minutes later. The night runs on past that off (to
    /// 01:00), so a hub some simulated minutes behind its pod still sends it while the pod
    /// plays. The empty right side goes off once nobody lay in it for 30 min.
    @Test func anEarlyRiseSwitchesTheSideOffAndAnEmptySideIsNotHeated() async throws {
        let rig = try await Rig(serial: "PRESENCE-EARLY", hours: 3, outBeforeEnd: 18 * 60, wake: "00:30") { c in
            c.schedule.presencePower.right.noShowMinutes = 30
        }
        let end = Self.nightStart.addingTimeInterval(3 * 3600 - 60)
        #expect(await eventually(240) { rig.podPassed(end) }, "\(rig.lines.all.suffix(20))")
        await rig.pod.waitUntilFinished()
        let stays = rig.occupied(side: 0)
        let left = try #require(stays.last?.end, "the model had nobody in the left side")
        let offs = rig.log(.left).filter { !$0.on && $0.cause == .command }
        #expect(offs.count == 1, "\(rig.log(.left)) \(rig.lines.all.suffix(20))")
        let off = try #require(offs.first)
        // Ten minutes of empty bed (the hysteresis), read a second at a time by the hub.
        #expect(off.at.timeIntervalSince(left) >= 10 * 60 && off.at.timeIntervalSince(left) < 13 * 60, "left \(left), off \(off.at)")
        for stay in stays { #expect(!offs.contains { stay.start <= $0.at && $0.at < stay.end }) }
        #expect(stays.allSatisfy { rig.powered(.left, at: $0.start.addingTimeInterval(60)) })
        // The right side: SET_POWER on at the hub's start (inside its window), off after 30 min with nobody.
        let rightOff = try #require(rig.log(.right).first { !$0.on && $0.cause == .command })
        #expect(rightOff.at.timeIntervalSince(Self.nightStart) >= 30 * 60 && rightOff.at.timeIntervalSince(Self.nightStart) < 33 * 60)
        // Said, published and stored with the reason.
        let notices = rig.notices
        #expect(notices.contains { $0.side == .left && $0.action == "off" && $0.reason == "bed_left" && $0.outcome == "ack"
                                   && $0.text.hasPrefix("left power off at ") && $0.text.hasSuffix("bed empty for 10 min") },
                "\(notices)")
        #expect(notices.contains { $0.side == .right && $0.reason == "no_show" })
        let stored = try await rig.daemon.store.presencePowerChanges(podSerial: "PRESENCE-EARLY")
        #expect(stored.map(\.reason).sorted() == ["bed_left", "no_show"], "\(stored)")
        #expect(rig.lines.contains("bed empty for 10 min"))
        await rig.stop()
    }

    /// Two sleepers getting up at different times (in a six-hour night, the left one 36 min
    /// before its end, the right one 20 min before it): each side goes off ten minutes after its
    /// own sleeper left, and neither while someone lies in it. The night runs on ten minutes
    /// past the last off, so a hub behind its pod still sends it while the pod plays.
    @Test func twoSleepersLeavingAtDifferentTimesEachGetTheirOwnOff() async throws {
        let partner = SideConfig(sleeper: SleeperProfile(restingHeartRate: 64, getsIn: 300, getsOutBeforeEnd: 20 * 60,
                                                         bathroomTrip: false))
        let rig = try await Rig(serial: "PRESENCE-TWO", hours: 6, outBeforeEnd: 36 * 60, wake: "04:30", right: partner)
        let end = Self.nightStart.addingTimeInterval(6 * 3600 - 60)
        #expect(await eventually(480) { rig.podPassed(end) }, "\(rig.lines.all.suffix(20))")
        await rig.pod.waitUntilFinished()
        var exits: [BedSide: Date] = [:]
        for (index, side) in [(0, BedSide.left), (1, BedSide.right)] {
            let stays = rig.occupied(side: index)
            let left = try #require(stays.last?.end, "nobody in the \(side) side")
            exits[side] = left
            let offs = rig.log(side).filter { !$0.on && $0.cause == .command }
            let off = try #require(offs.first { $0.at > left }, "\(side): \(rig.log(side))")
            #expect(off.at.timeIntervalSince(left) >= 10 * 60 && off.at.timeIntervalSince(left) < 13 * 60, "\(side): left \(left), off \(off.at)")
            for stay in stays { #expect(!offs.contains { stay.start <= $0.at && $0.at < stay.end }, "\(side): off during \(stay)") }
        }
        let leftExit = try #require(exits[.left]), rightExit = try #require(exits[.right])
        #expect(rightExit.timeIntervalSince(leftExit) > 12 * 60, "the sleepers got up \(leftExit) and \(rightExit)")
        await rig.stop()
    }

    /// No alarm, in bed until 00:15, past the scheduled off (23:30): the hub moves the pod's own
    /// off later (the power schedule it pushes), so the pod never switches the sleeper off, and
    /// switches the side off ten minutes after they got up.
    @Test func aLateRisePastTheOffTimeKeepsThePowerOnUntilTheSleeperLeaves() async throws {
        let rig = try await Rig(serial: "PRESENCE-LATE", hours: 2.5, outBeforeEnd: 15 * 60, wake: "23:00") { c in
            c.schedule.conversion.alarm.enabled = false
        }
        let end = Self.nightStart.addingTimeInterval(2.5 * 3600 - 60)
        #expect(await eventually(300) { rig.podPassed(end) }, "\(rig.lines.all.suffix(20))")
        await rig.pod.waitUntilFinished()
        let stays = rig.occupied(side: 0)
        let left = try #require(stays.last?.end)
        #expect(left > Self.nightStart.addingTimeInterval(5400 + 25 * 60), "the sleeper got up at \(left), not past the off")
        // Powered through every minute of every stay, the pod's own off included.
        for stay in stays {
            var t = stay.start.addingTimeInterval(60)
            while t < stay.end { #expect(rig.powered(.left, at: t), "unpowered at \(t): \(rig.log(.left))"); t += 60 }
        }
        #expect(!rig.log(.left).contains { !$0.on && $0.cause == .schedule && $0.at < left }, "\(rig.log(.left))")
        let off = try #require(rig.log(.left).first { !$0.on && $0.at > left }, "\(rig.log(.left))")
        #expect(off.at.timeIntervalSince(left) < 13 * 60, "off \(off.at), left \(left)")
        #expect(rig.notices.contains { $0.action == "hold" && $0.reason == "still_in_bed" }, "\(rig.notices)")
        await rig.stop()
    }

    /// A hub restarted while keep-on held the power past the schedule's off (here 21:30; the
    /// hold, stored by the hub before, runs to 22:20): the driver's start-up pushes the
    /// schedule without the hold, so the service pushes the stored hold again, and the pod
    /// holds the later off, which ends the power, rather than none until tomorrow's.
    @Test func aHoldStoredBeforeARestartIsPushedAgain() async throws {
        let until = Self.nightStart.addingTimeInterval(20 * 60)
        let rig = try await Rig(serial: "PRESENCE-RESTART", hours: 0.5, outBeforeEnd: 60, bedtime: "20:00", wake: "21:00") { _ in }
            beforeStart: { store in
            try await store.recordPresencePowerChange(PresencePowerChange(
                podSerial: "PRESENCE-RESTART", side: .left, at: Int64(Self.nightStart.timeIntervalSince1970) - 900, action: "hold",
                until: Int64(until.timeIntervalSince1970), reason: "still_in_bed",
                text: "left power kept on until 22:20: still in bed at the scheduled off 21:30", outcome: "pushed"))
        }
        #expect(await eventually(120) { rig.pod.currentSchedule(side: .left)?.power?.off == TimeOfDay(wrapping: 22 * 60 + 20) },
                "the pod holds \(String(describing: rig.pod.currentSchedule(side: .left))); \(rig.lines.all.suffix(10))")
        // Said after the push returns, so a moment after the pod holds it.
        #expect(await eventually(30) { rig.lines.contains("left power kept on until 22:20 again") })
        await rig.stop()
    }

    /// The right side was empty two nights before the hub (re)started (the count is stored): it
    /// is away, so switched off at once rather than after the no-show's two hours. A pod reboot
    /// makes the driver push everything again inside the window, but no power-on for the side
    /// the hub switched off. The owner then clears away at run time: on at once, the count
    /// starts again, and it is stored.
    @Test func awayCountedBeforeARestartKeepsTheSideColdUntilTheOwnerClearsIt() async throws {
        let serial = "PRESENCE-AWAY"
        let rig = try await Rig(serial: serial, hours: 1, outBeforeEnd: 60, wake: "23:30") { _ in }
            beforeStart: { store in
            try await store.savePresencePowerEmptyNights(podSerial: serial, side: .right, count: 2, at: 0)
        }
        #expect(await eventually(120) { rig.notices.contains { $0.side == .right && $0.reason == "away" } },
                "\(rig.notices) \(rig.lines.all.suffix(20))")
        let away = try #require(rig.notices.first { $0.side == .right && $0.reason == "away" })
        #expect(away.text.hasSuffix("away: nobody slept here for 2 nights"), "\(away.text)")
        #expect(away.at.timeIntervalSince(Self.nightStart) < 5 * 60, "off at \(away.at)")
        #expect(await eventually(30) { rig.log(.right).last.map { !$0.on && $0.cause == .command } ?? false }, "\(rig.log(.right))")

        // A reboot empties the pod's schedules (and its power log); the driver sends them all again.
        rig.pod.inject(.reboot(.watchdog))
        #expect(await eventually(120) { rig.pod.currentSchedule(side: .left)?.power != nil && rig.pod.currentSchedule(side: .right)?.power != nil },
                "\(rig.lines.all.suffix(20))")
        #expect(await eventually(120) { rig.podPassed(Self.nightStart.addingTimeInterval(40 * 60)) })
        #expect(!rig.log(.right).contains { $0.on }, "the right side was switched on again: \(rig.log(.right))")

        // The owner is back: away cleared, on at once, the count stored as 0.
        let inForce = try await rig.daemon.control.setPresencePower(podSerial: serial, side: .right,
                                                                    change: PresencePowerChangeRequest(away: false))
        #expect(!inForce.isAway)
        #expect(inForce.emptyNights == 0)
        #expect(await eventually(60) { rig.log(.right).last.map { $0.on && $0.cause == .command } ?? false }, "\(rig.log(.right))")
        #expect(await eventually(30) { rig.notices.contains { $0.side == .right && $0.reason == "away_cleared" && $0.outcome == "ack" } },
                "\(rig.notices)")
        let stored = try await rig.daemon.store.presencePowerSide(podSerial: serial, side: .right)
        #expect(stored?.emptyNights == 0)
        #expect(stored?.settings?.away == false)
        // Out of range: refused before anything is stored.
        await #expect(throws: HubControl.ControlError.self) {
            try await rig.daemon.control.setPresencePower(podSerial: serial, side: .right,
                                                          change: PresencePowerChangeRequest(offWhenLeftMinutes: 1))
        }
        #expect(try await rig.daemon.store.presencePowerSide(podSerial: serial, side: .right)?.settings?.offWhenLeftMinutes == 10)
        await rig.stop()
    }

    /// The right side, empty all night, has presence-driven power off (the owner's, stored)
    /// until the owner switches it on at run time: its policy starts from the presence the
    /// hub last saw (empty), so the no-show rule switches it off 30 min later. Before, a side
    /// switched on at run time waited for its presence to change, and an empty side never did.
    @Test func aSideSwitchedOnAtRunTimeStartsFromThePresenceLastSeen() async throws {
        let serial = "PRESENCE-LATER"
        let rig = try await Rig(serial: serial, hours: 1, outBeforeEnd: 60, wake: "23:30") { _ in }
            beforeStart: { store in
            try await store.savePresencePowerChoice(podSerial: serial, side: .right, enabled: false, settings: nil,
                                                    resetEmptyNights: false, at: 0)
        }
        #expect(await eventually(120) { rig.podPassed(Self.nightStart.addingTimeInterval(5 * 60)) })
        #expect(!rig.log(.right).contains { !$0.on }, "\(rig.log(.right))")
        let enabledAt = rig.daemon.clock.now()
        var change = PresencePowerChangeRequest(enabled: true)
        change.noShowMinutes = 30
        let inForce = try await rig.daemon.control.setPresencePower(podSerial: serial, side: .right, change: change)
        #expect(inForce.enabled && inForce.settings.noShowMinutes == 30)
        #expect(await eventually(180) { rig.log(.right).contains { !$0.on && $0.cause == .command } }, "\(rig.log(.right))")
        let off = try #require(rig.log(.right).first { !$0.on && $0.cause == .command })
        #expect(off.at.timeIntervalSince(enabledAt) >= 29 * 60 && off.at.timeIntervalSince(enabledAt) < 33 * 60,
                "switched on at \(enabledAt), off at \(off.at)")
        // Told once the pod's answer is back.
        #expect(await eventually(30) { rig.notices.contains { $0.side == .right && $0.reason == "no_show" } }, "\(rig.notices)")
        await rig.stop()
    }
}
