import PodProtocol
import Testing
@testable import VirtualPod
import SleepDomain

/// The firmware rules of firmware-protocol.md §6–§7, without a pty: requests at given ticks.
@Suite struct PodFirmwareTests {
    /// 2026-01-04T23:58:30 at UTC+1 (a Sunday), as UTC milliseconds.
    static let sundayLate: Int64 = 1_767_567_510_000

    func frame(_ m: Message, id: UInt16, flags: FrameFlags = []) -> DecodedFrame {
        DecodedFrame(header: FrameHeader(flags: flags, sequence: id, type: m.typeCode, requestID: id), message: m)
    }

    /// A frame with raw payload bytes, through the real codec (for malformed requests).
    func raw(type: UInt8, payload: [UInt8], id: UInt16) throws -> DecodedFrame {
        let bytes = try FrameEncoder.frame(header: FrameHeader(sequence: id, type: type, requestID: id), payload: payload)
        return try FrameDecoder.parse(frame: bytes).get()
    }

    func status(_ out: [PodFirmware.Outbound]) -> Status? {
        if case .response(let r) = out.first?.message { return r.status }
        return nil
    }

    func ready(_ fw: inout PodFirmware, clockAt ms: Int64? = nil, tick: UInt64 = 1000) {
        _ = fw.handle(frame(.hello(HelloRequest()), id: 1), tick: tick)
        if let ms {
            _ = fw.handle(frame(.setClock(ClockSetting(unixMillis: ms, utcOffsetMinutes: 60)), id: 2), tick: tick)
        }
    }

    @Test func localTimeKnowsWeekdaysAndMinutes() {
        // 2026-01-01T00:00:00Z is a Thursday; at UTC+1 it is 01:00.
        let t = LocalTime(unixMillis: 1_767_225_600_000, offsetMinutes: 60)
        #expect(t.weekday.isoNumber == 4)
        #expect(t.minuteOfDay == 60)
        let before = LocalTime(unixMillis: -1, offsetMinutes: 0)
        #expect(before.weekday.isoNumber == 3)
        #expect(before.minuteOfDay == 1439)
        let sunday = LocalTime(unixMillis: Self.sundayLate, offsetMinutes: 60)
        #expect(sunday.weekday.isoNumber == 7)
        #expect(sunday.minuteOfDay == 23 * 60 + 58)
    }

    @Test func nothingButHelloBeforeHello() throws {
        var fw = PodFirmware(identity: PodIdentity())
        #expect(status(fw.handle(frame(.getStatus, id: 1), tick: 5)) == .noSession)  // v1.1: no session yet (send HELLO)
        #expect(status(fw.handle(frame(.startStream(.all), id: 2), tick: 5)) == .noSession)
        let out = fw.handle(frame(.hello(HelloRequest(minVersion: 2, maxVersion: 3)), id: 3), tick: 5)
        #expect(status(out) == .unsupportedVersion)
        #expect(!fw.linkReady)
        let hello = fw.handle(frame(.hello(HelloRequest()), id: 4), tick: 777)
        guard case .response(let r) = hello.first?.message, case .hello(let info) = r.body else {
            Issue.record("no pod info"); return
        }
        #expect(info.serial == "VPOD0001")
        #expect(info.sides == 2 && info.piezoChannelsPerSide == 2 && info.sampleRate == 500)
        #expect(info.capacitanceRateMilliHz == 2000 && info.features == .all)
        #expect(info.tick == 777 && info.bootCount == 1)
        #expect(hello.first?.requestID == 4)
    }

    @Test func malformedAndUnknownRequestsGetTheirStatus() throws {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw)
        // SET_ALARM cut short: BAD_LENGTH; side 2: BAD_VALUE.
        #expect(status(fw.handle(try raw(type: 0x06, payload: [0, 1], id: 10), tick: 10)) == .badLength)
        #expect(status(fw.handle(try raw(type: 0x07, payload: [2], id: 11), tick: 10)) == .badValue)
        #expect(status(fw.handle(try raw(type: 0x0B, payload: [0, 1, 101], id: 12), tick: 10)) == .badValue)
        let unknown = fw.handle(try raw(type: 0x0E, payload: [1, 2, 3], id: 13), tick: 10)
        #expect(unknown.first?.message == .unknown(type: 0x8E, payload: [Status.unknownMessage.rawValue]))
        #expect(unknown.first?.requestID == 13)
        // A hub never sends streams or responses: ignored, not answered.
        #expect(fw.handle(frame(.event(PodEvent(tick: 0, kind: .boot, side: nil)), id: 14), tick: 10).isEmpty)
        #expect(fw.ignoredFrames == 1)
    }

    @Test func schedulesAndAlarmsNeedAValidClock() {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw)
        let schedule = PowerSchedule(side: .left, days: .everyDay, on: TimeOfDay("22:30")!, off: TimeOfDay("07:15")!, level: 80)
        let alarm = AlarmSetting(side: .right, days: .mondayToFriday, time: TimeOfDay("06:45")!, intensity: 70,
                                 pattern: .rise, durationSeconds: 600)
        #expect(status(fw.handle(frame(.setPowerSchedule(schedule), id: 3), tick: 10)) == .notReady)
        #expect(status(fw.handle(frame(.setAlarm(alarm), id: 4), tick: 10)) == .notReady)
        #expect(fw.report(side: .left).power == nil)
        _ = fw.handle(frame(.setClock(ClockSetting(unixMillis: Self.sundayLate, utcOffsetMinutes: 60)), id: 5), tick: 20)
        #expect(status(fw.handle(frame(.setPowerSchedule(schedule), id: 6), tick: 30)) == .ok)
        #expect(status(fw.handle(frame(.setAlarm(alarm), id: 7), tick: 30)) == .ok)
        let got = fw.handle(frame(.getSchedule(side: .left), id: 8), tick: 30)
        guard case .response(let r) = got.first?.message, case .schedule(let report) = r.body else {
            Issue.record("no schedule report"); return
        }
        #expect(report.power == schedule)
        #expect(fw.report(side: .right).alarm == alarm)
        // A narrower later entry is the one reported, with its own days.
        let weekend = PowerSchedule(side: .left, days: .saturdayAndSunday, on: TimeOfDay("23:30")!, off: TimeOfDay("09:00")!, level: 60)
        _ = fw.handle(frame(.setPowerSchedule(weekend), id: 9), tick: 40)
        #expect(fw.report(side: .left).power == weekend)
        // A one-sided pod has no right side.
        var single = PodFirmware(identity: PodIdentity(sides: 1))
        ready(&single, clockAt: Self.sundayLate)
        #expect(status(single.handle(frame(.setAlarm(alarm), id: 3), tick: 30)) == .unsupportedFeature)
    }

    @Test func retransmissionsAreAnsweredFromTheCacheWithoutActingTwice() {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw)
        let set = Message.setClock(ClockSetting(unixMillis: 1_000_000, utcOffsetMinutes: 0))
        let first = fw.handle(frame(set, id: 7), tick: 100)
        // The retry comes later: the anchor must still say tick 100 (not re-applied at 900).
        let retry = fw.handle(frame(set, id: 7, flags: .retransmit), tick: 900)
        #expect(retry == first)
        #expect(fw.clock?.tick == 100)
        #expect(fw.retransmitsFromCache == 1)
        // Eight newer requests push it out of the cache: then it is acted on again.
        for id in UInt16(20)..<28 { _ = fw.handle(frame(.ping(nonce: [UInt8(id)]), id: id), tick: 950) }
        _ = fw.handle(frame(set, id: 7, flags: .retransmit), tick: 1000)
        #expect(fw.clock?.tick == 1000)
        // The same id with a different request is a new request, not a retry.
        let other = fw.handle(frame(.ping(nonce: [9]), id: 7), tick: 1000)
        guard case .response(let r) = other.first?.message else { Issue.record("no response"); return }
        #expect(r.body == .pong([9]))
        // A fresh HELLO (a reopened link) voids the cache: a GET_STATUS with an old id is fresh.
        let s1 = fw.handle(frame(.getStatus, id: 30), tick: 1100)
        _ = fw.handle(frame(.hello(HelloRequest()), id: 1), tick: 1200)
        let s2 = fw.handle(frame(.getStatus, id: 30), tick: 1300)
        #expect(s1 != s2)
    }

    @Test func aRepeatedHelloIsActedOnNeverAnsweredFromTheCache() {
        var fw = PodFirmware(identity: PodIdentity())
        let hello = frame(.hello(HelloRequest()), id: 1)
        let first = fw.handle(hello, tick: 1000)
        _ = fw.handle(frame(.startStream(.all), id: 2), tick: 1100)
        // The same id and payload again, later (a hub that reopened the link, or a retransmit):
        // v1.1 §7.2 acts on it, so the answer carries the tick now, not the remembered one.
        let again = fw.handle(frame(.hello(HelloRequest()), id: 1, flags: .retransmit), tick: 5000)
        guard case .response(let a) = first.first?.message, case .hello(let infoA) = a.body,
              case .response(let b) = again.first?.message, case .hello(let infoB) = b.body else {
            Issue.record("no HELLO answers"); return
        }
        #expect(infoA.tick == 1000 && infoB.tick == 5000)
        #expect(fw.retransmitsFromCache == 0)
    }

    /// Collects the events fired through `tick`.
    func run(_ fw: inout PodFirmware, through tick: UInt64) -> [PodEvent] {
        var events: [PodEvent] = []
        fw.fireTimers(through: tick) { events.append($0) }
        return events
    }

    @Test func alarmAndScheduleFireOnTheLocalClockAcrossMidnight() throws {
        var fw = PodFirmware(identity: PodIdentity())
        // Sunday 23:58:30 local at tick 1000.
        ready(&fw, clockAt: Self.sundayLate, tick: 1000)
        let anchor = try #require(fw.clock)
        let power = PowerSchedule(side: .left, days: .sunday, on: TimeOfDay("23:59")!, off: TimeOfDay("00:01")!, level: 40)
        let alarm = AlarmSetting(side: .right, days: .monday, time: TimeOfDay("00:00")!, intensity: 55,
                                 pattern: .constant, durationSeconds: 30)
        #expect(status(fw.handle(frame(.setPowerSchedule(power), id: 3), tick: 1000)) == .ok)
        #expect(status(fw.handle(frame(.setAlarm(alarm), id: 4), tick: 1000)) == .ok)
        let events = run(&fw, through: 1000 + 500 * 240)
        func unix(_ e: PodEvent) -> Int64 { anchor.unixMillis(atTick: e.tick) }
        let kinds = events.map(\.kind)
        #expect(kinds == [.powerOn, .alarmStarted, .alarmStopped, .powerOff])
        #expect(events.count == 4)
        guard events.count == 4 else { return }
        #expect(unix(events[0]) == Self.sundayLate + 30_000)            // 23:59:00 Sunday
        #expect(events[0].argument == 40 && events[0].side == .left)
        #expect(unix(events[1]) == Self.sundayLate + 90_000)            // 00:00:00 Monday
        #expect(events[1].argument == 55 && events[1].side == .right)
        #expect(unix(events[2]) == Self.sundayLate + 120_000)           // 30 s later
        #expect(events[2].argument == 0)
        #expect(unix(events[3]) == Self.sundayLate + 150_000)           // 00:01:00 Monday
        #expect(fw.fired.map(\.outcome) == [.started])
        #expect(fw.fired.first?.localTime == TimeOfDay("00:00"))
    }

    @Test func snoozeRestartsAndClearStops() throws {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw, clockAt: Self.sundayLate, tick: 0)
        let alarm = AlarmSetting(side: .left, days: .monday, time: TimeOfDay("00:00")!, intensity: 80,
                                 pattern: .double, durationSeconds: 600)
        #expect(status(fw.handle(frame(.snooze(side: .left, seconds: 60), id: 3), tick: 0)) == .notReady)
        _ = fw.handle(frame(.setAlarm(alarm), id: 4), tick: 0)
        let started = run(&fw, through: 500 * 100)
        #expect(started.map(\.kind) == [.alarmStarted])
        let snooze = fw.handle(frame(.snooze(side: .left, seconds: 60), id: 5), tick: 500 * 100)
        #expect(status(snooze) == .ok)
        #expect(snooze.dropFirst().first?.message == .event(PodEvent(tick: 500 * 100, kind: .alarmSnoozed, side: .left, argument: 60)))
        let again = run(&fw, through: 500 * 161)
        #expect(again.map(\.kind) == [.alarmStarted])
        #expect(again.first?.tick == 500 * 160)
        let clear = fw.handle(frame(.clearAlarm(side: .left), id: 6), tick: 500 * 170)
        #expect(clear.dropFirst().first?.message == .event(PodEvent(tick: 500 * 170, kind: .alarmStopped, side: .left, argument: 2)))
        #expect(fw.report(side: .left).alarm == nil)
        #expect(run(&fw, through: 500 * 2000).isEmpty)
        #expect(fw.fired.map(\.outcome) == [.started, .restartedAfterSnooze])
    }

    @Test func anAlarmDueWithoutAValidClockFailsLoudly() {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw, clockAt: Self.sundayLate, tick: 0)
        let alarm = AlarmSetting(side: .right, days: .everyDay, time: TimeOfDay("00:00")!, intensity: 80,
                                 pattern: .double, durationSeconds: 60)
        _ = fw.handle(frame(.setAlarm(alarm), id: 3), tick: 0)
        fw.invalidateClock()
        let events = run(&fw, through: 500 * 120)
        #expect(events == [PodEvent(tick: 500 * 90, kind: .alarmFailed, side: .right, argument: 2)])
        #expect(fw.fired.map(\.outcome) == [.failedClockInvalid])
        #expect(fw.status(tick: 500 * 120).clockValid == false)
    }

    @Test func rebootForgetsEverythingButCountsTheBoot() {
        var fw = PodFirmware(identity: PodIdentity(initialBootCount: 7))
        ready(&fw, clockAt: Self.sundayLate, tick: 0)
        _ = fw.handle(frame(.startStream(.all), id: 3), tick: 0)
        _ = fw.handle(frame(.setAlarm(AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("07:00")!,
                                                   intensity: 50, pattern: .rise, durationSeconds: 60)), id: 4), tick: 0)
        let boot = fw.reboot(reason: .brownOut)
        #expect(boot == PodEvent(tick: 0, kind: .boot, side: nil, argument: ResetReason.brownOut.rawValue))
        #expect(fw.bootCount == 8)
        #expect(fw.clock == nil && fw.streaming.isEmpty && !fw.linkReady)
        #expect(fw.report(side: .left).alarm == nil)
        #expect(status(fw.handle(frame(.getStatus, id: 5), tick: 10)) == .noSession)
        #expect(fw.nextTimer == nil)
    }

    // MARK: v1.1

    @Test func aV11HelloGetsTheMinorAndThePreciseStatuses() {
        var fw = PodFirmware(identity: PodIdentity())
        let hello = fw.handle(frame(.hello(HelloRequest(maxMinor: 1)), id: 1), tick: 5)
        guard case .response(let r) = hello.first?.message, case .hello(let info) = r.body else {
            Issue.record("no pod info"); return
        }
        #expect(info.protocolMinor == 1 && info.features.contains(.alarmTrigger))
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("07:00")!, intensity: 50, pattern: .rise,
                                 durationSeconds: 60)
        #expect(status(fw.handle(frame(.setAlarm(alarm), id: 2), tick: 5)) == .clockNotSet)
        #expect(status(fw.handle(frame(.snooze(side: .left, seconds: 0), id: 3), tick: 5)) == .nothingToSnooze)
        // A v1.0 HELLO (no minor field) gets a v1.0 reply and the v1 statuses.
        let old = fw.handle(frame(.hello(HelloRequest()), id: 4), tick: 6)
        guard case .response(let r1) = old.first?.message, case .hello(let info1) = r1.body else {
            Issue.record("no pod info"); return
        }
        #expect(info1.protocolMinor == nil)
        #expect(status(fw.handle(frame(.setAlarm(alarm), id: 5), tick: 6)) == .notReady)
    }

    @Test func triggerAlarmFiresNowAndDisarmsTheAlarmDueNext() throws {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw, clockAt: Self.sundayLate, tick: 0)  // Sunday 23:58:30 local
        // Armed every day at 00:05; triggered at Monday 00:01 (tick 150 s): Monday's 00:05 stays silent.
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("00:05")!, intensity: 80, pattern: .double,
                                 durationSeconds: 30)
        _ = fw.handle(frame(.setAlarm(alarm), id: 3), tick: 0)
        _ = run(&fw, through: 500 * 150)
        let out = fw.handle(frame(.triggerAlarm(AlarmTrigger(side: .left, intensity: 60, pattern: .rise, durationSeconds: 20)), id: 4),
                            tick: 500 * 150)
        #expect(status(out) == .ok)
        #expect(out.dropFirst().first?.message == .event(PodEvent(tick: 500 * 150, kind: .alarmStarted, side: .left, argument: 60)))
        #expect(fw.isVibrating(side: 0))
        let rest = run(&fw, through: 500 * 3600)  // until Monday 00:58
        #expect(rest.map(\.kind) == [.alarmStopped])  // the trigger's 20 s end; no 00:05 alarm
        #expect(rest.first?.tick == 500 * 170)
        #expect(fw.fired.map(\.outcome) == [.triggered])
        #expect(fw.report(side: .left).alarm == alarm)  // still armed for the next days
        // Tuesday 00:05 fires again.
        let tuesday = run(&fw, through: 500 * (90 + 86_400 + 400))
        #expect(tuesday.contains { $0.kind == .alarmStarted })
        #expect(fw.fired.map(\.outcome) == [.triggered, .started])
    }

    /// §6.2 (clarified 2026-12-07): the occurrence of the current minute never counts as the
    /// next one, fired or not; the first in a later minute does.
    @Test func aTriggerInTheAlarmsOwnMinuteDisarmsNothingAndOneJustBeforeDisarmsIt() throws {
        // Sunday 23:58:30 local; the alarm at 00:00 every day.
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("00:00")!, intensity: 80, pattern: .double,
                                 durationSeconds: 10)
        let trigger = AlarmTrigger(side: .left, intensity: 60, pattern: .rise, durationSeconds: 5)
        var inMinute = PodFirmware(identity: PodIdentity())
        ready(&inMinute, clockAt: Self.sundayLate, tick: 0)
        _ = inMinute.handle(frame(.setAlarm(alarm), id: 3), tick: 0)
        _ = run(&inMinute, through: 500 * 120)  // Monday 00:00:30: 00:00 fired at its start
        #expect(inMinute.fired.map(\.outcome) == [.started])
        _ = inMinute.handle(frame(.triggerAlarm(trigger), id: 4), tick: 500 * 120)
        _ = run(&inMinute, through: 500 * (90 + 86_400 + 30))  // Tuesday 00:00:30
        #expect(inMinute.fired.map(\.outcome) == [.started, .triggered, .started], "Tuesday's 00:00 is a day ahead: armed")

        var before = PodFirmware(identity: PodIdentity())
        ready(&before, clockAt: Self.sundayLate, tick: 0)
        _ = before.handle(frame(.setAlarm(alarm), id: 3), tick: 0)
        _ = before.handle(frame(.triggerAlarm(trigger), id: 4), tick: 500 * 89)  // Sunday 23:59:59
        _ = run(&before, through: 500 * 3600)
        #expect(before.fired.map(\.outcome) == [.triggered], "Monday's 00:00 was the next occurrence: disarmed")
    }

    /// §7.1 (clarified 2026-12-07): every HELLO starts a new session and stops the stream; the
    /// pod's clock and alarm stay.
    @Test func aHelloStopsTheStreamAndKeepsThePodsState() {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw, clockAt: Self.sundayLate)
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("07:00")!, intensity: 80, pattern: .double,
                                 durationSeconds: 10)
        _ = fw.handle(frame(.setAlarm(alarm), id: 3), tick: 1000)
        #expect(status(fw.handle(frame(.startStream(.all), id: 4), tick: 1000)) == .ok)
        #expect(!fw.streaming.isEmpty)
        #expect(status(fw.handle(frame(.hello(HelloRequest(maxMinor: 1)), id: 5), tick: 1001)) == .ok)
        #expect(fw.streaming.isEmpty)
        #expect(fw.clock != nil && fw.report(side: .left).alarm == alarm)
    }

    @Test func triggerAlarmNeedsTheFeature() {
        var fw = PodFirmware(identity: PodIdentity(features: .v1))
        ready(&fw, clockAt: Self.sundayLate)
        let t = AlarmTrigger(side: .right, intensity: 50, pattern: .constant, durationSeconds: 10)
        #expect(status(fw.handle(frame(.triggerAlarm(t), id: 3), tick: 1000)) == .unsupportedFeature)
        #expect(fw.fired.isEmpty)
    }

    @Test func aTimeSkippedByAForwardJumpFiresOnceAfterItAndARepeatedOneFiresOnce() {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw, clockAt: Self.sundayLate, tick: 0)  // Sunday 23:58:30 at UTC+1
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("00:30")!, intensity: 80, pattern: .double,
                                 durationSeconds: 10)
        _ = fw.handle(frame(.setAlarm(alarm), id: 3), tick: 0)
        // Monday 00:10 (tick 690 s): the offset goes +1 h → +2 h, local 00:10 becomes 01:10; 00:30 was skipped.
        let t0: UInt64 = 500 * 690
        _ = run(&fw, through: t0)
        let utc = Self.sundayLate + 690_000
        let jumped = fw.handle(frame(.setClock(ClockSetting(unixMillis: utc, utcOffsetMinutes: 120)), id: 4), tick: t0)
        let after = run(&fw, through: t0 + 500 * 120)
        // At the first minute after the jump, the one the clock jumped to (01:10), as 02:30 rings at
        // 03:00 on a spring-forward night: with the clock's answer. It rang a minute late (01:11)
        // until 2026-11-28.
        #expect(jumped.dropFirst().map(\.message) == [.event(PodEvent(tick: t0, kind: .alarmStarted, side: .left, argument: 80))])
        #expect(!after.contains { $0.kind == .alarmStarted })
        #expect(fw.fired.first?.tick == t0)
        // Back to +1 h at local 01:20: 00:20 … 01:20 repeat, 00:30 comes again and stays silent.
        let t1 = t0 + 500 * 600
        _ = run(&fw, through: t1)
        _ = fw.handle(frame(.setClock(ClockSetting(unixMillis: utc + 600_000, utcOffsetMinutes: 60)), id: 5), tick: t1)
        let repeated = run(&fw, through: t1 + 500 * 3600)
        #expect(!repeated.contains { $0.kind == .alarmStarted })
        #expect(fw.fired.map(\.outcome) == [.started])
    }

    /// A smart-wake window may cross midnight (window 23:10–00:10): a trigger before midnight
    /// disarms the alarm due after it, which rang as well until 2026-11-28.
    @Test func aTriggerBeforeMidnightDisarmsTheAlarmDueAfterIt() throws {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw, clockAt: Self.sundayLate, tick: 0)  // Sunday 23:58:30 local
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("00:05")!, intensity: 80, pattern: .double,
                                 durationSeconds: 10)
        _ = fw.handle(frame(.setAlarm(alarm), id: 3), tick: 0)
        _ = fw.handle(frame(.triggerAlarm(AlarmTrigger(side: .left, intensity: 60, pattern: .rise, durationSeconds: 5)), id: 4),
                      tick: 500 * 20)  // Sunday 23:58:50
        _ = run(&fw, through: 500 * 3600)  // Monday 00:58
        #expect(fw.fired.map(\.outcome) == [.triggered])
        _ = run(&fw, through: 500 * (90 + 86_400 + 400))  // Tuesday 00:05 rings as usual
        #expect(fw.fired.map(\.outcome) == [.triggered, .started])
    }

    /// A trigger hours before the alarm (not the hub's smart wake) leaves it armed.
    @Test func aTriggerFarFromTheAlarmDisarmsNothing() throws {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw, clockAt: Self.sundayLate, tick: 0)
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("04:00")!, intensity: 80, pattern: .double,
                                 durationSeconds: 10)
        _ = fw.handle(frame(.setAlarm(alarm), id: 3), tick: 0)
        _ = fw.handle(frame(.triggerAlarm(AlarmTrigger(side: .left, intensity: 60, pattern: .rise, durationSeconds: 5)), id: 4),
                      tick: 500 * 150)  // Monday 00:01, 4 h before
        _ = run(&fw, through: 500 * 5 * 3600)
        #expect(fw.fired.map(\.outcome) == [.triggered, .started])
    }

    /// The hub re-sends every alarm 15 minutes before a DST change: the alarm in force sent
    /// again after it rang does not ring a second time in the repeated hour (it did until
    /// 2026-11-28), while another alarm set the same day is armed afresh.
    @Test func theAlarmInForceSentAgainDoesNotRingTwiceInARepeatedHour() throws {
        var fw = PodFirmware(identity: PodIdentity())
        ready(&fw, clockAt: Self.sundayLate, tick: 0)  // Sunday 23:58:30 at UTC+1
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("00:30")!, intensity: 80, pattern: .double,
                                 durationSeconds: 10)
        _ = fw.handle(frame(.setAlarm(alarm), id: 3), tick: 0)
        let t0: UInt64 = 500 * (90 + 45 * 60)  // Monday 00:45: it rang at 00:30
        _ = run(&fw, through: t0)
        #expect(fw.fired.map(\.outcome) == [.started])
        _ = fw.handle(frame(.setAlarm(alarm), id: 4), tick: t0)  // the pre-change re-send
        // 01:00 becomes 00:00 (+1 h → 0 h): 00:30 comes again.
        let t1 = t0 + 500 * 15 * 60
        _ = run(&fw, through: t1)
        _ = fw.handle(frame(.setClock(ClockSetting(unixMillis: Self.sundayLate + Int64(t1 / 500) * 1000, utcOffsetMinutes: 0)), id: 5),
                      tick: t1)
        _ = run(&fw, through: t1 + 500 * 3600)
        #expect(fw.fired.map(\.outcome) == [.started])
        // Another alarm the same day is a new one, and rings.
        let later = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("01:20")!, intensity: 80, pattern: .double,
                                 durationSeconds: 10)
        _ = fw.handle(frame(.setAlarm(later), id: 6), tick: t1 + 500 * 3600)  // local 01:00
        _ = run(&fw, through: t1 + 500 * 5400)
        #expect(fw.fired.map(\.outcome) == [.started, .started])
    }
}
