import TestSupport
import Foundation
import Hub
import Logging
import NightModel
import PodDevice
import SleepDomain
import SleepStore
import SmartWake
import Synchronization
import SystemCalls
import Testing
import VirtualPod

/// Smart wake end to end: the daemon against the virtual pod on a real pty, on a simulated
/// clock. The night starts Monday 2026-11-16 22:00 UTC; the left side's manual alarm is 23:30
/// (the latest wake time), the window 23:00–23:30.
@Suite(.serialized) struct SmartWakeHubTests {
    static let nightStart = Date(timeIntervalSince1970: 1_794_866_400)  // 2026-11-16T22:00:00Z
    static let alarm = Date(timeIntervalSince1970: 1_794_866_400 + 5400)  // 23:30Z
    static let windowStart = alarm.addingTimeInterval(-1800)

    final class Rig: Sendable {
        let dir: ScheduleTempDir
        let pod: VirtualPod
        let daemon: HubDaemon
        let running: Task<Void, any Error>
        let lines: ReportedLines
        let heard: BusRecorder
        let config: HubConfiguration
        let wakeDate: CalendarDay

        init(serial: String, seed: UInt64, speed: Double = 200, hours: Double = 2, window: Int, untilOutOfBed: Bool = false,
             repeatAfterMinutes: Double = 5, response: AlarmResponse = AlarmResponse(), rule: SmartWakeRule = SmartWakeRule(),
             alarmSeconds: Int = 120, start: Date = SmartWakeHubTests.nightStart, zone: String = "UTC",
             faults: [ScheduledFault] = [], leavesBedAt: Date? = nil, maxGapMinutes: Double = 5,
             bedtime: String = "22:00", wake: String = "23:30",
             wakeDate: CalendarDay = CalendarDay(year: 2026, month: 11, day: 16)!, leftEmpty: Bool = false) async throws {
            self.wakeDate = wakeDate
            dir = try ScheduleTempDir()
            let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 120, getsOutBeforeEnd: 60, bathroomTrip: false,
                                                             alarmResponse: response,
                                                             leavesBedAt: leavesBedAt?.timeIntervalSince(start)))
            let night = NightConfig(seed: seed, duration: hours * 3600, sides: [leftEmpty ? .empty : sleeper, .empty], noise: .normal,
                                    channelsPerSide: 1)
            var podConfiguration = VirtualPodConfiguration(identity: PodIdentity(serial: serial), night: night, speed: speed,
                                                           transmitQueueLimit: VirtualPodConfiguration.clockedTransmitQueue)
            podConfiguration.faults = faults
            let timeline = PacedTimeline()
            podConfiguration.timeline = timeline
            pod = try VirtualPod(configuration: podConfiguration)
            let tty = try pod.start()
            var c = HubConfiguration()
            c.stateDirectory = dir.path("state")
            c.timeZone = zone
            c.schedule.podTimeZone = zone
            c.pod.path = tty
            c.api.enabled = false
            c.sessions.maxGapMinutes = maxGapMinutes
            c.schedule.smartWake.left.windowMinutes = window
            c.schedule.smartWake.left.untilOutOfBed = untilOutOfBed
            c.schedule.smartWake.left.repeatAfterMinutes = repeatAfterMinutes
            c.schedule.conversion.alarm.durationSeconds = alarmSeconds
            config = c
            try FileManager.default.createDirectory(atPath: c.stateDirectory, withIntermediateDirectories: true)
            do {
                // The alarm (the window's end) as a manual schedule, before the hub starts.
                let store = try NightStore(path: c.databasePath, timeZone: TimeZone(identifier: zone)!)
                try await store.setManualSchedule(ManualScheduleRecord(
                    podSerial: serial, side: .left, weekdayBedtime: bedtime, weekdayWake: wake,
                    weekendBedtime: bedtime, weekendWake: wake, setAt: 0))
                try store.close()
            }
            let lines = ReportedLines()
            self.lines = lines
            let reporter = HubReporter(logger: Logger(label: "wake-test") { _ in CapturingLogHandler(sink: lines) }, console: false)
            daemon = try await HubDaemon.assemble(configuration: c, clock: HubClock(start: start, speed: speed, timeline: timeline),
                                                  reporter: reporter, wakeRule: rule)
            heard = BusRecorder(daemon.bus.subscribe(name: "test", bufferSize: 1 << 20))
            let daemon = self.daemon
            running = Task { try await daemon.run(stopSignals: nil) }
        }

        /// The pod's model clock has passed `date` (its alarms at that minute are decided).
        func podPassed(_ date: Date) -> Bool {
            guard let anchor = pod.clock else { return false }
            return anchor.unixTime(ofTick: pod.snapshot.tick) >= date.timeIntervalSince1970
        }

        var leftAlarms: [FiredAlarm] { pod.alarmsFired.filter { $0.side == .left } }

        /// A model moment (the pod's simulation) in the hub's time, through the clock the hub
        /// set: the two start apart by however long the hub took to come up, seconds at 200×.
        func hubTime(_ model: Date) -> Double {
            TruthClock(clocks: pod.snapshot.appliedClocks, nightStartUnix: SmartWakeHubTests.nightStart.timeIntervalSince1970)
                .unixTime(simulatedSeconds: model.timeIntervalSince(SmartWakeHubTests.nightStart))
        }

        func wakeEvents() -> [WakeNotice] {
            heard.soFar.compactMap { if case .wake(let w) = $0 { w } else { nil } }
        }

        func record() async throws -> WakeRecord? {
            try await daemon.store.wakeRecords(wakeDate: wakeDate, side: .left).last
        }

        func stop() async {
            running.cancel()
            _ = await running.result
            pod.stop()
            dir.cleanup()
        }
    }

    /// A rule that takes the first in-bed epoch of the window: the night is built to wake early.
    static var eager: SmartWakeRule {
        var r = SmartWakeRule()
        r.lightProbability = 0
        r.lightEpochs = 1
        r.deepVeto = 1.01
        r.remVeto = 1.01
        return r
    }

    @Test func anEarlyDecisionTriggersTheAlarmInsideTheWindowAndLeavesNoSecondAlarmThatDay() async throws {
        let rig = try await Rig(serial: "WAKE-EARLY", seed: 31, window: 30, rule: Self.eager)
        #expect(await eventually(180) { rig.podPassed(Self.alarm.addingTimeInterval(20 * 60)) }, "\(rig.lines.all.suffix(20))")
        let record = try #require(try await rig.record(), "no wake record; the hub said \(rig.lines.all.suffix(30))")
        #expect(record.windowMinutes == 30)
        #expect(record.windowStart == Int64(Self.windowStart.timeIntervalSince1970))
        #expect(record.windowEnd == Int64(Self.alarm.timeIntervalSince1970))
        #expect(record.reason == WakeReason.lightSleep.rawValue || record.reason == WakeReason.awakeMoving.rawValue,
                "reason \(String(describing: record.reason))")
        #expect(record.triggered, "trigger error \(String(describing: record.triggerError))")
        let decided = try #require(record.decidedAt)
        #expect(decided > record.windowStart && decided < record.windowEnd)
        #expect((record.minutesBeforeEnd ?? 0) > 0)
        let fired = try #require(record.firedAt)
        #expect(fired >= record.windowStart && fired < record.windowEnd, "rang at \(fired)")
        // The pod rang once, by the hub's TRIGGER_ALARM; its own 23:30 was disarmed for the day.
        #expect(rig.leftAlarms.map(\.outcome) == [.triggered], "\(rig.leftAlarms)")
        #expect(rig.pod.alarmsFired.filter { $0.side == .left && $0.outcome == .started }.isEmpty)
        // The sleeper heard it (the truth is complete once the night has played), and the bus
        // and console told the story.
        await rig.pod.waitUntilFinished()
        #expect(rig.pod.groundTruth?.alarmReactions.contains { $0.side == 0 } == true)
        let kinds = rig.wakeEvents().map(\.kind)
        #expect(kinds.starts(with: [.windowOpened, .decided, .fired]), "\(kinds)")
        #expect(rig.lines.contains("alarm triggered"))
        let summary = record.summary(in: TimeZone(identifier: "UTC")!)
        #expect(summary.contains("wake window 23:00–23:30 (30 min)") && summary.contains("alarm triggered by the hub"), "\(summary)")
        await rig.stop()
    }

    /// A sleeper who gets up 20 s into the window's first epoch and is back in bed five
    /// minutes later. That epoch is still mostly in bed, so it is staged, and the eager rule
    /// would take it, but by then the bed is empty: no wake is sent for an empty bed (it would
    /// ring for nobody and disarm the pod's own alarm for the day). The alarm rings once the
    /// sleeper is back.
    /// A side nobody slept in: the pod rings at the window's end, and the wake has no out-of-bed
    /// time (the hub's first empty second was recorded as one, with an `out_of_bed` event).
    @Test func aSideNobodySleptInGetsNoOutOfBedTime() async throws {
        let rig = try await Rig(serial: "WAKE-NOBODY", seed: 31, window: 30, leftEmpty: true)
        #expect(await eventually(180) { (try? await rig.record())?.firedAt != nil }, "\(rig.lines.all.suffix(20))")
        #expect(await eventually(60) { rig.lines.all.contains { $0.contains("left: nobody seen in bed since the hub started") } },
                "\(rig.lines.all.suffix(20))")
        let record = try #require(try await rig.record())
        #expect(record.outOfBedAt == nil && !record.triggered, "\(record)")
        #expect(!rig.wakeEvents().contains { $0.kind == .outOfBed }, "\(rig.wakeEvents().map(\.kind))")
        await rig.stop()
    }

    @Test func noEarlyWakeIsSentOnceTheBedHasEmptied() async throws {
        let out = Self.windowStart.addingTimeInterval(20), back = out.addingTimeInterval(300)
        let rig = try await Rig(serial: "WAKE-EMPTY", seed: 31, window: 30, rule: Self.eager, leavesBedAt: out)
        #expect(await eventually(180) { (try? await rig.record())?.firedAt != nil }, "\(rig.lines.all.suffix(20))")
        let record = try #require(try await rig.record(), "no wake record; the hub said \(rig.lines.all.suffix(30))")
        let decided = try #require(record.decidedAt)
        #expect(record.triggered && Double(decided) > back.timeIntervalSince1970,
                "decided \(String(describing: record.reason)) at \(Date(timeIntervalSince1970: Double(decided))), out of bed \(out)–\(back)")
        let fired = try #require(record.firedAt)
        #expect(Double(fired) > back.timeIntervalSince1970 && fired < record.windowEnd, "rang at \(fired)")
        #expect(await eventually(60) { rig.podPassed(Self.alarm.addingTimeInterval(60)) })
        #expect(rig.leftAlarms.map(\.outcome) == [.triggered], "\(rig.leftAlarms)")
        await rig.stop()
    }

    /// The shipped rule on a live night. On this night (seed 32) the window lies in the first
    /// sleep cycle and the live stager says deep (P ≈ 0.77 at the end): the rule holds back
    /// and the pod rings at 23:30 by itself. Either way the alarm rings once, and an early one
    /// must have found light sleep or awake. (The rule's early wakes are measured by the wake
    /// bench; the hub's early path by the eager rule above.)
    @Test func withTheDefaultRuleTheAlarmFiresInLightSleepOrAwakeInsideTheWindowElseAtTheEnd() async throws {
        let rig = try await Rig(serial: "WAKE-RULE", seed: 32, window: 30)
        #expect(await eventually(180) { rig.podPassed(Self.alarm.addingTimeInterval(10 * 60)) }, "\(rig.lines.all.suffix(20))")
        #expect(await eventually(30) { (try? await rig.record())?.firedAt != nil })
        let record = try #require(try await rig.record())
        let reason = try #require(record.reason.flatMap(WakeReason.init(rawValue:)))
        let fired = try #require(record.firedAt)
        let left = rig.leftAlarms
        #expect(left.count == 1, "\(left)")
        if reason == .windowEnd {
            // The pod's own alarm at the window's end, on its own clock.
            #expect(!record.triggered)
            #expect(left.first?.outcome == .started && left.first?.localTime?.description == "23:30")
            #expect(abs(Double(fired) - Self.alarm.timeIntervalSince1970) <= 1)
        } else {
            #expect(record.triggered && left.first?.outcome == .triggered)
            #expect(fired >= record.windowStart && fired < record.windowEnd)
            // The stage the alarm found, as the truth records it (from the alarm on, the
            // sleeper's truth is their answer to it).
            await rig.pod.waitUntilFinished()
            let found = rig.pod.groundTruth?.alarmReactions.first { $0.side == 0 }?.stage
            #expect(found == .core || found == .awake, "woke from \(String(describing: found))")
        }
        await rig.stop()
    }

    /// A rule that never wakes early (everything vetoed): the hub is watching the window when
    /// it goes away, and has not decided yet.
    static var neverEarly: SmartWakeRule {
        var r = SmartWakeRule()
        r.remVeto = 0
        return r
    }

    @Test func aScheduleChangedBeforeTheWindowOpensMovesTheWindow() async throws {
        // The hub plans the 23:15–23:45 window at once; the alarm then moves to 23:30 (as an
        // inferred schedule does after a night) before the window opens.
        let rig = try await Rig(serial: "WAKE-MOVE", seed: 32, window: 30, rule: Self.neverEarly, wake: "23:45")
        let planned = Self.alarm.addingTimeInterval(15 * 60)
        #expect(await eventually(60) { rig.daemon.wake?.window(side: .left)?.end == planned }, "\(rig.lines.all.suffix(20))")
        _ = try await rig.daemon.control.setManualSchedule(podSerial: "WAKE-MOVE", sides: [.left], bedtime: "22:00", wake: "23:30")
        #expect(await eventually(180) { rig.wakeEvents().contains { $0.kind == .windowOpened } }, "\(rig.lines.all.suffix(20))")
        #expect(rig.lines.contains("wake window open 23:00:00–23:30:00"), "\(rig.lines.all.suffix(20))")
        #expect(rig.daemon.wake?.window(side: .left)?.end == Self.alarm)
        #expect(!rig.lines.contains("wake window open 23:15:00"))
        await rig.stop()
    }

    @Test func anAlarmWhoseStartIsLostOnTheLinkIsRecordedFromItsStop() async throws {
        // The pod stalls across 23:30 (what it would send meanwhile is lost, ALARM_STARTED
        // with it); the alarm's stop after its 120 s still arrives and says when it rang.
        let rig = try await Rig(serial: "WAKE-LOST", seed: 34, window: 30, rule: Self.neverEarly,
                                faults: [ScheduledFault(.stall(seconds: 0.5), at: 5390)])
        #expect(await eventually(180) { rig.podPassed(Self.alarm.addingTimeInterval(240)) }, "\(rig.lines.all.suffix(20))")
        #expect(await eventually(30) { (try? await rig.record())?.firedAt != nil }, "\(rig.lines.all.suffix(30))")
        #expect(rig.leftAlarms.map(\.outcome) == [.started], "\(rig.leftAlarms)")
        #expect(rig.lines.contains("its start was lost on the link"), "\(rig.lines.all.suffix(30))")
        let record = try #require(try await rig.record())
        #expect(abs(Double(record.firedAt ?? 0) - Self.alarm.timeIntervalSince1970) <= 2, "fired \(String(describing: record.firedAt))")
        await rig.stop()
    }

    @Test func withTheHubKilledMidWindowThePodFiresAtTheEndByItself() async throws {
        let rig = try await Rig(serial: "WAKE-KILL", seed: 33, window: 30, rule: Self.neverEarly)
        #expect(await eventually(180) { rig.wakeEvents().contains { $0.kind == .windowOpened } }, "\(rig.lines.all.suffix(20))")
        #expect(!rig.podPassed(Self.alarm))
        rig.running.cancel()
        _ = await rig.running.result
        #expect(await eventually(120) { rig.podPassed(Self.alarm.addingTimeInterval(120)) })
        let left = rig.leftAlarms
        #expect(left.map(\.outcome) == [.started], "\(left)")
        #expect(left.first?.localTime?.description == "23:30")
        await rig.stop()
    }

    @Test func withTheLinkDroppedMidWindowThePodFiresAtTheEndByItself() async throws {
        let rig = try await Rig(serial: "WAKE-DROP", seed: 34, window: 30, rule: Self.neverEarly)
        #expect(await eventually(180) { rig.wakeEvents().contains { $0.kind == .windowOpened } }, "\(rig.lines.all.suffix(20))")
        #expect(!rig.podPassed(Self.alarm))
        // The link goes away for 40 simulated minutes: past the window's end.
        rig.pod.inject(.disconnect(seconds: 40 * 60))
        #expect(await eventually(120) { rig.podPassed(Self.alarm.addingTimeInterval(120)) })
        let left = rig.leftAlarms
        #expect(left.map(\.outcome) == [.started], "\(left)")
        #expect(left.first?.localTime?.description == "23:30")
        await rig.stop()
    }

    @Test func untilOutOfBedRingsAgainWhileTheSideIsOccupiedAndStopsOnceItEmpties() async throws {
        // A fixed alarm (no window); the sleeper sleeps through two alarms and gets up within a
        // minute of the third (before it stops, so no third repeat).
        let rig = try await Rig(serial: "WAKE-REPEAT", seed: 35, window: 0, untilOutOfBed: true, repeatAfterMinutes: 2,
                                response: AlarmResponse(lightOrAwakeMinutes: 0.5...1, remMinutes: 0.5...1, deepMinutes: 0.5...1, ignoredAlarms: 2))
        #expect(await eventually(240) {
            guard let r = try? await rig.record() else { return false }
            return r.outOfBedAt != nil
        }, "the hub said \(rig.lines.all.suffix(30))")
        let record = try #require(try await rig.record())
        #expect(record.windowMinutes == 0)
        #expect(record.repeats == 2, "\(record)")
        let fired = try #require(record.firedAt)
        #expect(abs(Double(fired) - Self.alarm.timeIntervalSince1970) <= 1)
        let out = try #require(record.outOfBedAt)
        #expect(out > fired)
        // Three alarms: the pod's own at 23:30, then two the hub triggered; none after the sleeper left.
        #expect(await eventually(60) { rig.podPassed(Date(timeIntervalSince1970: Double(out) + 10 * 60)) })
        #expect(rig.leftAlarms.map(\.outcome) == [.started, .triggered, .triggered], "\(rig.leftAlarms)")
        await rig.pod.waitUntilFinished()
        let reactions = rig.pod.groundTruth?.alarmReactions.filter { $0.side == 0 } ?? []
        #expect(reactions.count == 3 && reactions.last?.gotUpAt != nil, "\(reactions)")
        let kinds = rig.wakeEvents().map(\.kind)
        #expect(kinds.filter { $0 == .repeated }.count == 2 && kinds.last == .outOfBed, "\(kinds)")
        await rig.stop()
    }

    @Test func aSleeperBackInBedAfterTheAlarmIsWokenAgainAndTheLastExitIsRecorded() async throws {
        // A fixed alarm at 23:30, slept through; 20 s later the sleeper goes to the bathroom for
        // five minutes and comes back to bed (the session's gap is 10 min, so it is one night).
        // Back in bed, "until out of bed" looks again two minutes later and rings; that alarm
        // gets them up for good. Before, the bathroom trip ended the wake: no repeat, and the
        // record said they were up at 23:30:20 while the night ran on.
        let out = Self.alarm.addingTimeInterval(20), back = out.addingTimeInterval(300)
        let rig = try await Rig(serial: "WAKE-BACK", seed: 37, window: 0, untilOutOfBed: true, repeatAfterMinutes: 2,
                                response: AlarmResponse(lightOrAwakeMinutes: 0.5...1, remMinutes: 0.5...1, deepMinutes: 0.5...1,
                                                        ignoredAlarms: 1),
                                alarmSeconds: 60, leavesBedAt: out, maxGapMinutes: 10)
        #expect(await eventually(240) {
            guard let r = try? await rig.record() else { return false }
            return r.returnsToBed == 1 && r.outOfBedAt != nil
        }, "the hub said \(rig.lines.all.suffix(30))")
        let record = try #require(try await rig.record())
        #expect(record.repeats == 1, "\(record)")
        let up = try #require(record.outOfBedAt)
        #expect(Double(up) > rig.hubTime(back), "out of bed \(up), back in bed at \(rig.hubTime(back))")
        let kinds = rig.wakeEvents().map(\.kind).filter { [.outOfBed, .backInBed, .repeated].contains($0) }
        #expect(kinds == [.outOfBed, .backInBed, .repeated, .outOfBed], "\(kinds)")
        // The first exit was recorded as it happened, then withdrawn.
        let first = rig.wakeEvents().first { $0.kind == .outOfBed }?.record.outOfBedAt
        #expect(first.map { abs(Double($0) - rig.hubTime(out)) <= 5 } == true, "first exit \(String(describing: first)), truth \(rig.hubTime(out))")
        // The pod's alarm, then the one the hub triggered after the return; the last exit is
        // the truth's and the stored night ends there too.
        #expect(rig.leftAlarms.map(\.outcome) == [.started, .triggered], "\(rig.leftAlarms)")
        await rig.pod.waitUntilFinished()
        let reactions = rig.pod.groundTruth?.alarmReactions.filter { $0.side == 0 } ?? []
        let gotUp = try #require(reactions.compactMap(\.gotUpAt).last, "\(reactions)")
        let truthUp = rig.hubTime(Self.nightStart.addingTimeInterval(gotUp))
        #expect(abs(Double(up) - truthUp) <= 5, "recorded \(up), the sleeper got up at \(truthUp)")
        let nightEndsThere = await eventually(60) {
            guard let night = try? await rig.daemon.store.allSessions(side: .left).last else { return false }
            return abs(Double(night.end) - Double(up)) <= 30
        }
        let nights = (try? await rig.daemon.store.allSessions(side: .left).map { ($0.start, $0.end) }) ?? []
        #expect(nightEndsThere, "nights (start, end): \(nights), out of bed \(up)")
        await rig.stop()
    }

    @Test func aSleeperBackWithinAMinuteOfTheAlarmWasNeverOutOfBed() async throws {
        // Up at 23:25:30 for five minutes, back at 23:30:30, half a minute after the alarm began:
        // empty when it rang, but not a minute past it. The wake goes on: the alarm stops,
        // two minutes later the side is occupied and the hub rings again, which gets them up.
        // Before, the empty minute before the alarm counted: "already empty when the alarm
        // rang", and no repeat.
        let out = Self.alarm.addingTimeInterval(-270), back = out.addingTimeInterval(300)
        let rig = try await Rig(serial: "WAKE-LATE", seed: 38, window: 0, untilOutOfBed: true, repeatAfterMinutes: 2,
                                response: AlarmResponse(lightOrAwakeMinutes: 0.5...1, remMinutes: 0.5...1, deepMinutes: 0.5...1),
                                alarmSeconds: 60, leavesBedAt: out, maxGapMinutes: 10)
        #expect(await eventually(240) { (try? await rig.record())?.outOfBedAt != nil }, "the hub said \(rig.lines.all.suffix(30))")
        let record = try #require(try await rig.record())
        #expect(record.repeats == 1 && record.returnsToBed == 0, "\(record)")
        let up = try #require(record.outOfBedAt)
        #expect(Double(up) > rig.hubTime(back) + 60, "out of bed \(up), back at \(rig.hubTime(back))")
        let kinds = rig.wakeEvents().map(\.kind).filter { [.outOfBed, .backInBed, .repeated].contains($0) }
        #expect(kinds == [.repeated, .outOfBed], "\(kinds)")
        #expect(rig.leftAlarms.map(\.outcome) == [.started, .triggered], "\(rig.leftAlarms)")
        // The scenario held: the pod's alarm found the side empty (the hub's and the pod's
        // clocks could put it after the return only if they were half a minute apart).
        await rig.pod.waitUntilFinished()
        let reactions = rig.pod.groundTruth?.alarmReactions.filter { $0.side == 0 } ?? []
        #expect(reactions.first.map { $0.stage == nil } == true, "\(reactions)")
        await rig.stop()
    }

    @Test func aSnoozeIsRecordedAndUntilOutOfBedStillFollows() async throws {
        // A 10-min alarm, snoozed for a minute as soon as it rings: the pod rings again after the
        // snooze (the sleeper's second alarm, also slept through); once it stops the hub rings
        // once more and that one gets them up.
        let rig = try await Rig(serial: "WAKE-SNOOZE", seed: 36, window: 0, untilOutOfBed: true, repeatAfterMinutes: 2,
                                response: AlarmResponse(lightOrAwakeMinutes: 0.5...1, remMinutes: 0.5...1,
                                                        deepMinutes: 0.5...1, ignoredAlarms: 2),
                                alarmSeconds: 600)
        #expect(await eventually(180) { rig.wakeEvents().contains { $0.kind == .fired } }, "\(rig.lines.all.suffix(20))")
        let answer = try await rig.daemon.control.send(.snooze(side: .left, seconds: 60), toPod: "WAKE-SNOOZE")
        #expect(answer == .ack)
        #expect(await eventually(240) { (try? await rig.record())?.outOfBedAt != nil }, "the hub said \(rig.lines.all.suffix(30))")
        let record = try #require(try await rig.record())
        #expect(record.snoozes == 1 && record.repeats == 1, "\(record)")
        #expect(rig.leftAlarms.map(\.outcome) == [.started, .restartedAfterSnooze, .triggered], "\(rig.leftAlarms)")
        #expect(rig.wakeEvents().contains { $0.kind == .snoozed })
        await rig.stop()
    }

    @Test func aWindowAcrossFallBackIsItsWallLengthAndRingsAtTheWallTime() async throws {
        // New York falls back on 2026-11-01 at 06:00 UTC (02:00 EDT → 01:00 EST). The alarm
        // 02:10 (EST, 07:10 UTC) with a 90-min window: wall 00:40–02:10 would be 2.5 real hours
        // across the repeated hour; the window is never longer than its 90 minutes, so the hub
        // watches 05:40–07:10 UTC (01:40 EDT → 02:10 EST) and the pod rings at 02:10 EST.
        let transition = Date(timeIntervalSince1970: 1_793_512_800)
        let rig = try await Rig(serial: "WAKE-FALL", seed: 38, hours: 2.5, window: 90, rule: Self.neverEarly,
                                start: transition.addingTimeInterval(-3600), zone: "America/New_York",
                                bedtime: "23:00", wake: "02:10", wakeDate: CalendarDay(year: 2026, month: 11, day: 1)!)
        let end = transition.addingTimeInterval(70 * 60)
        #expect(await eventually(180) { rig.podPassed(end.addingTimeInterval(120)) }, "\(rig.lines.all.suffix(20))")
        #expect(await eventually(30) { (try? await rig.record())?.firedAt != nil }, "\(rig.lines.all.suffix(30))")
        let record = try #require(try await rig.record())
        #expect(record.windowStart == Int64(end.addingTimeInterval(-90 * 60).timeIntervalSince1970))
        #expect(record.windowEnd == Int64(end.timeIntervalSince1970))
        #expect(record.windowMinutes == 90 && record.reason == WakeReason.windowEnd.rawValue)
        #expect(abs(Double(record.firedAt ?? 0) - end.timeIntervalSince1970) <= 1)
        #expect(rig.leftAlarms.map(\.outcome) == [.started] && rig.leftAlarms.first?.localTime?.description == "02:10",
                "\(rig.leftAlarms)")
        #expect(record.summary(in: TimeZone(identifier: "America/New_York")!).hasPrefix("wake window 01:40–02:10 (90 min)"),
                "\(record.summary(in: TimeZone(identifier: "America/New_York")!))")
        await rig.stop()
    }

    @Test func aWindowAcrossSpringForwardIsWatchedOnlyInItsRealMinutesAndRingsAtTheWallTime() async throws {
        // New York springs forward on 2026-03-08 at 07:00 UTC (02:00 EST → 03:00 EDT). The alarm
        // 03:10 with a 30-min window: 02:40–03:10 wall time, of which 02:40–03:00 does not exist,
        // so the hub watches 03:00–03:10 EDT (07:00–07:10 UTC) and the pod rings at 03:10 EDT.
        let transition = Date(timeIntervalSince1970: 1_772_953_200)
        let rig = try await Rig(serial: "WAKE-DST", seed: 37, hours: 1.5, window: 30, rule: Self.neverEarly,
                                start: transition.addingTimeInterval(-3600), zone: "America/New_York",
                                bedtime: "23:00", wake: "03:10", wakeDate: CalendarDay(year: 2026, month: 3, day: 8)!)
        let end = transition.addingTimeInterval(600)
        #expect(await eventually(180) { rig.podPassed(end.addingTimeInterval(120)) }, "\(rig.lines.all.suffix(20))")
        #expect(await eventually(30) { (try? await rig.record())?.firedAt != nil }, "\(rig.lines.all.suffix(30))")
        let record = try #require(try await rig.record())
        #expect(record.windowStart == Int64(transition.timeIntervalSince1970))
        #expect(record.windowEnd == Int64(end.timeIntervalSince1970))
        #expect(record.windowMinutes == 30 && record.reason == WakeReason.windowEnd.rawValue)
        #expect(abs(Double(record.firedAt ?? 0) - end.timeIntervalSince1970) <= 1)
        #expect(rig.leftAlarms.map(\.outcome) == [.started] && rig.leftAlarms.first?.localTime?.description == "03:10",
                "\(rig.leftAlarms)")
        #expect(record.summary(in: TimeZone(identifier: "America/New_York")!).hasPrefix("wake window 03:00–03:10 (10 of 30 min: the clocks went forward)"),
                "\(record.summary(in: TimeZone(identifier: "America/New_York")!))")
        #expect(rig.lines.all.contains { $0.contains("wake window open 03:00:00–03:10:00 (10 of 30 min: the clocks went forward), smart wake watching") },
                "\(rig.lines.all.filter { $0.contains("wake window") })")
        await rig.stop()
    }
}
