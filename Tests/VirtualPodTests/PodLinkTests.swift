#if canImport(Glibc)
import Glibc
#endif
import NightModel
import PodProtocol
import Testing
@testable import VirtualPod
import SleepDomain

/// The virtual pod over a real pseudo-terminal, seen by a hub built from PodProtocol's own
/// encoder and decoder. Speeds are high so the suite stays quick; nothing is timed.
@Suite struct PodLinkTests {
    static func night(seed: UInt64 = 3, right: Bool = false) -> NightConfig {
        NightConfig(seed: seed, duration: 4 * 3600,
                    sides: [SideConfig(sleeper: SleeperProfile(getsIn: 0)), right ? SideConfig() : .empty],
                    pumpVibration: false)
    }

    static func pod(speed: Double, serial: String = "TEST0001", seed: UInt64 = 3,
                    faults: [ScheduledFault] = [], link: String? = nil, transmitQueue: Int = 1 << 20) throws -> VirtualPod {
        try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: serial), night: night(seed: seed), speed: speed, faults: faults, linkPath: link,
            transmitQueueLimit: transmitQueue))
    }

    /// A hub on the pod's tty, handshaken, with piezo streaming and a first block read.
    static func streamingHub(_ path: String) throws -> HubLink {
        let hub = try HubLink(path: path)
        _ = try handshake(hub)
        #expect(hub.request(.startStream(.piezo))?.0.status == .ok)
        #expect(hub.wait { $0.piezo != nil } != nil)
        return hub
    }

    /// HELLO and SET_CLOCK; returns the pod info and the clock anchor.
    static func handshake(_ hub: HubLink, unixMillis: Int64 = 1_767_225_600_000) throws -> (PodInfo, ClockAnchor) {
        let (hello, _) = try #require(hub.request(.hello(HelloRequest())))
        guard case .hello(let info) = hello.body else { throw Failure("no pod info: \(hello)") }
        let (set, _) = try #require(hub.request(.setClock(ClockSetting(unixMillis: unixMillis, utcOffsetMinutes: 60))))
        guard case .clock(let anchor) = set.body else { throw Failure("no clock anchor: \(set)") }
        return (info, anchor)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ d: String) { description = d }
    }

    @Test func streamsAtTheSpecRatesWithContiguousTicksAndSequence() throws {
        let pod = try Self.pod(speed: 100)
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try HubLink(path: path)
        let (info, anchor) = try Self.handshake(hub)
        #expect(info.serial == "TEST0001" && info.sides == 2 && info.piezoChannelsPerSide == 2)
        #expect(anchor.tick >= info.tick)
        let (ack, _) = try #require(hub.request(.startStream(.all)))
        #expect(ack.status == .ok)
        let from = hub.frames.count
        var environments = 0
        _ = hub.wait(from: from, deadline: 60) { f in
            if case .environment = f.message { environments += 1 }
            return environments >= 5
        }
        #expect(environments >= 5)
        let received = hub.frames[from...]
        for side in BedSide.allCases {
            let blocks = received.compactMap(\.piezo).filter { $0.side == side }
            #expect(blocks.count >= 150)
            #expect(blocks.allSatisfy { $0.count == 50 && $0.channels == 2 && $0.gain == 16 })
            #expect(zip(blocks, blocks.dropFirst()).allSatisfy { $1.firstTick == $0.firstTick + 50 })
            let caps = received.compactMap { f -> CapacitanceReading? in
                if case .capacitance(let c) = f.message, c.side == side { c } else { nil }
            }
            #expect(caps.allSatisfy { $0.values.count == 3 })
            #expect(zip(caps, caps.dropFirst()).allSatisfy { $1.tick == $0.tick + 250 })
            // Rates agree with each other: ten piezo blocks for every two capacitance readings.
            if let c0 = caps.first, let c1 = caps.last, let b0 = blocks.first, let b1 = blocks.last {
                let capSpan = Double(c1.tick - c0.tick) / 500, blockSpan = Double(b1.firstTick - b0.firstTick) / 500
                #expect(abs(Double(caps.count - 1) / capSpan - 2) < 0.01)
                #expect(abs(Double(blocks.count - 1) / blockSpan - 10) < 0.01)
            }
        }
        let envs = received.compactMap { f -> EnvironmentReading? in if case .environment(let e) = f.message { e } else { nil } }
        #expect(zip(envs, envs.dropFirst()).allSatisfy { $1.tick == $0.tick + 2500 })
        // The occupied left side carries a body signal, far above the empty right side's noise.
        let left = received.compactMap(\.piezo).filter { $0.side == .left }.flatMap(\.samples)
        let right = received.compactMap(\.piezo).filter { $0.side == .right }.flatMap(\.samples)
        func spread(_ s: [Int32]) -> Int64 { Int64(s.max() ?? 0) - Int64(s.min() ?? 0) }
        #expect(spread(left) > 100_000)
        #expect(spread(left) > spread(right))
        let c = hub.decoder.counters
        #expect(c.sequenceGaps == 0 && c.droppedFrames == 0 && c.crcErrors == 0 && c.malformed == 0 && c.outOfOrder == 0)
    }

    @Test func answersEveryRequestOverTheLinkIncludingNacksAndRetries() throws {
        let pod = try Self.pod(speed: 50)
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try HubLink(path: path)
        #expect(hub.request(.getStatus)?.0.status == .noSession)  // v1.1: no session yet (send HELLO)
        _ = try Self.handshake(hub)
        let (pong, pongHeader) = try #require(hub.request(.ping(nonce: [0xDE, 0xAD, 0x00, 0x01])))
        #expect(pong.body == .pong([0xDE, 0xAD, 0x00, 0x01]))
        #expect(pongHeader.type == 0x82)
        #expect(hub.request(.setPower(PowerCommand(side: .right, on: true, level: 30)))?.0.status == .ok)
        let schedule = PowerSchedule(side: .left, days: .mondayToFriday, on: TimeOfDay("22:30")!, off: TimeOfDay("07:15")!, level: 80)
        #expect(hub.request(.setPowerSchedule(schedule))?.0.status == .ok)
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("06:45")!, intensity: 70, pattern: .rise,
                                 durationSeconds: 600)
        #expect(hub.request(.setAlarm(alarm))?.0.status == .ok)
        let (report, _) = try #require(hub.request(.getSchedule(side: .left)))
        #expect(report.body == .schedule(ScheduleReport(side: .left, power: schedule, alarm: alarm)))
        #expect(pod.currentSchedule(side: .left)?.power == schedule)
        #expect(hub.request(.snooze(side: .left, seconds: 0))?.0.status == .notReady)
        #expect(hub.request(.clearAlarm(side: .left))?.0.status == .ok)
        #expect(hub.request(.startStream([.environment]))?.0.status == .ok)
        let (status, _) = try #require(hub.request(.getStatus))
        guard case .status(let st) = status.body else { Issue.record("no status"); return }
        #expect(st.clockValid && st.powerMask == 0b10 && st.alarmArmedMask == 0 && st.streaming == [.environment])
        #expect(st.bootCount == 1)
        #expect(hub.request(.stopStream)?.0.status == .ok)

        // Raw frames: an unknown type and a short payload.
        func rawFrame(type: UInt8, payload: [UInt8], id: UInt16) throws -> [UInt8] {
            let header = FrameHeader(sequence: hub.encoder.nextSequence, type: type, requestID: id)
            hub.encoder.nextSequence &+= 1
            return COBS.encode(try FrameEncoder.frame(header: header, payload: payload))
        }
        var start = hub.frames.count
        hub.sendRaw(try rawFrame(type: 0x0E, payload: [1], id: 900))
        let unknown = try #require(hub.wait(from: start) { $0.header.requestID == 900 })
        #expect(unknown.header.type == 0x8E)
        #expect(unknown.message == .unknown(type: 0x8E, payload: [Status.unknownMessage.rawValue]))
        start = hub.frames.count
        hub.sendRaw(try rawFrame(type: 0x05, payload: [0, 0x7F, 22], id: 901))
        let short = try #require(hub.wait(from: start) { $0.header.requestID == 901 })
        #expect(short.message == .response(Response(request: .setPowerSchedule, status: .badLength)))
        start = hub.frames.count
        hub.sendRaw(try rawFrame(type: 0x06, payload: [0, 0x7F, 25, 0, 50, 1, 10, 0], id: 902))
        let bad = try #require(hub.wait(from: start) { $0.header.requestID == 902 })
        #expect(bad.message == .response(Response(request: .setAlarm, status: .badValue)))

        // A retried SET_CLOCK is answered from the cache: same anchor, not re-applied.
        let set = Message.setClock(ClockSetting(unixMillis: 1_800_000_000_000, utcOffsetMinutes: 0))
        let (first, _) = try #require(hub.request(set, id: 500))
        let (again, againHeader) = try #require(hub.request(set, id: 500, flags: .retransmit))
        #expect(first == again)
        #expect(againHeader.sequence != 0)
        #expect(pod.snapshot.retransmitsFromCache == 1)
        #expect(pod.clock?.unixMillis == 1_800_000_000_000)
        #expect(hub.decoder.counters.sequenceGaps == 0)
    }

    @Test func scheduleAndAlarmFireAtThePushedLocalTimeOnAnAcceleratedClock() throws {
        let pod = try Self.pod(speed: 300)
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try HubLink(path: path)
        // Sunday 2026-01-04 23:58:30 at UTC+1.
        let sundayLate: Int64 = 1_767_567_510_000
        let (_, anchor) = try Self.handshake(hub, unixMillis: sundayLate)
        let power = PowerSchedule(side: .left, days: .sunday, on: TimeOfDay("23:59")!, off: TimeOfDay("00:01")!, level: 40)
        let alarm = AlarmSetting(side: .right, days: .monday, time: TimeOfDay("00:00")!, intensity: 55,
                                 pattern: .constant, durationSeconds: 30)
        #expect(hub.request(.setPowerSchedule(power))?.0.status == .ok)
        #expect(hub.request(.setAlarm(alarm))?.0.status == .ok)
        let off = hub.wait(deadline: 60) { $0.event?.kind == .powerOff }
        #expect(off != nil)
        let events = hub.frames.compactMap(\.event).filter { $0.kind != .boot }
        #expect(events.map(\.kind) == [.powerOn, .alarmStarted, .alarmStopped, .powerOff])
        let times = events.map { anchor.unixMillis(atTick: $0.tick) }
        #expect(times == [sundayLate + 30_000, sundayLate + 90_000, sundayLate + 120_000, sundayLate + 150_000])
        let fired = pod.alarmsFired
        #expect(fired.count == 1)
        #expect(fired.first?.localTime == TimeOfDay("00:00") && fired.first?.unixMillis == sundayLate + 90_000)
    }

    @Test func garbageBadCRCAndDropsAreCountedWhileValidFramesFlow() throws {
        let pod = try Self.pod(speed: 20)
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try HubLink(path: path)
        _ = try Self.handshake(hub)
        #expect(hub.request(.startStream(.piezo))?.0.status == .ok)
        func flowAgain() -> Bool {
            let n = hub.frames.count
            return hub.wait(from: n) { $0.piezo != nil } != nil && hub.wait(from: n + 1) { $0.piezo != nil } != nil
        }
        pod.inject(.garbage(bytes: 40))
        #expect(hub.wait { _ in hub.decoder.counters.malformed + hub.decoder.counters.crcErrors + hub.decoder.counters.oversize >= 1 } != nil)
        #expect(flowAgain())
        var c = hub.decoder.counters
        #expect(c.malformed + c.crcErrors + c.oversize == 1)
        #expect(c.sequenceGaps == 0)

        let crcBefore = c.crcErrors
        pod.inject(.badCRC(frames: 3))
        #expect(hub.wait { _ in hub.decoder.counters.sequenceGaps >= 1 } != nil)
        c = hub.decoder.counters
        #expect(c.crcErrors == crcBefore + 3)
        #expect(c.sequenceGaps == 1 && c.droppedFrames == 3)

        pod.inject(.dropFrames(5))
        #expect(hub.wait { _ in hub.decoder.counters.sequenceGaps >= 2 } != nil)
        c = hub.decoder.counters
        #expect(c.sequenceGaps == 2 && c.droppedFrames == 8)
        #expect(flowAgain())
        let s = pod.snapshot
        #expect(s.garbageBursts == 1 && s.corruptedFrames == 3 && s.faultDroppedFrames == 5)
    }

    @Test func aRebootRestartsTicksAndSequenceAndForgetsTheClock() throws {
        let pod = try Self.pod(speed: 20)
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try HubLink(path: path)
        _ = try Self.handshake(hub)
        #expect(hub.request(.setAlarm(AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("07:00")!,
                                                   intensity: 50, pattern: .rise, durationSeconds: 60)))?.0.status == .ok)
        #expect(hub.request(.startStream(.piezo))?.0.status == .ok)
        #expect(hub.wait { $0.piezo != nil } != nil)
        let restartsBefore = hub.decoder.counters.senderRestarts
        pod.inject(.reboot(.watchdog))
        let boot = try #require(hub.wait { $0.event?.kind == .boot && $0.event?.argument == ResetReason.watchdog.rawValue })
        #expect(boot.header.sequence == 0)
        #expect(boot.event?.tick == 0)
        #expect(hub.decoder.counters.senderRestarts == restartsBefore + 1)
        let bootIndex = try #require(hub.frames.firstIndex(of: boot))
        #expect(hub.request(.getStatus)?.0.status == .noSession)
        let (hello, _) = try #require(hub.request(.hello(HelloRequest())))
        guard case .hello(let info) = hello.body else { Issue.record("no hello"); return }
        #expect(info.bootCount == 2)
        let (status, _) = try #require(hub.request(.getStatus))
        guard case .status(let st) = status.body else { Issue.record("no status"); return }
        #expect(!st.clockValid && st.streaming.isEmpty && st.alarmArmedMask == 0 && st.bootCount == 2)
        #expect(hub.frames[bootIndex...].allSatisfy { $0.piezo == nil })
        #expect(hub.decoder.counters.sequenceGaps == 0)
        #expect(pod.clock == nil)
    }

    @Test func aDisconnectClosesTheTtyAndAReplugKeepsTheSerial() throws {
        let link = "/tmp/vpod-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let pod = try Self.pod(speed: 20, serial: "REPLUG42", link: link)
        let path = try pod.start()
        defer { pod.stop() }
        #expect(readLink(link) == path)
        let hub = try HubLink(path: path)
        _ = try Self.handshake(hub)
        #expect(hub.request(.startStream(.piezo))?.0.status == .ok)
        pod.inject(.disconnect(seconds: 0.3))
        #expect(hub.waitForHangUp())
        var newPath: String?
        for _ in 0..<400 {
            let s = pod.snapshot
            if s.attachCount == 2, let p = s.ttyPath { newPath = p; break }
            usleep(25_000)
        }
        let second = try #require(newPath)
        #expect(readLink(link) == second)
        let again = try HubLink(path: link)
        let (hello, _) = try #require(again.request(.hello(HelloRequest())))
        guard case .hello(let info) = hello.body else { Issue.record("no hello"); return }
        #expect(info.serial == "REPLUG42" && info.bootCount == 1)
        // The pod kept running: its clock is still set, but the new link needs a new START_STREAM.
        let (status, _) = try #require(again.request(.getStatus))
        guard case .status(let st) = status.body else { Issue.record("no status"); return }
        #expect(st.clockValid && st.streaming.isEmpty)
        pod.stop()
        #expect(readLink(link) == nil)
    }

    func readLink(_ path: String) -> String? {
        var buf = [CChar](repeating: 0, count: 256)
        let n = readlink(path, &buf, buf.count)
        guard n > 0 else { return nil }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A hub that stops reading: the pod queues up to its transmit queue, then drops. The same
    /// second unread loses frames with a 4-KiB queue and none with a 64-MiB one.
    @Test func aHubThatDoesNotReadOverflowsOnlyASmallTransmitQueue() throws {
        func droppedWhileUnread(queue: Int) throws -> UInt64 {
            let pod = try Self.pod(speed: 20, transmitQueue: queue)
            let path = try pod.start()
            defer { pod.stop() }
            let hub = try Self.streamingHub(path)
            let before = pod.snapshot.transmitDropped
            // 30 s of streaming at 20x, about 250 KB, not read (the tty kept open meanwhile).
            withExtendedLifetime(hub) { _ = usleep(1_500_000) }
            return pod.snapshot.transmitDropped - before
        }
        #expect(try droppedWhileUnread(queue: 4096) > 0)
        #expect(try droppedWhileUnread(queue: 64 << 20) == 0)
    }

    @Test func aStallLosesWhatItWouldHaveSentButAnswersAfterwards() throws {
        let pod = try Self.pod(speed: 20)
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try Self.streamingHub(path)
        pod.inject(.stall(seconds: 0.4))
        // Wait until the pod is stalled (it dropped something), then ask it.
        for _ in 0..<400 where pod.snapshot.transmitDropped == 0 { usleep(10_000) }
        #expect(pod.snapshot.transmitDropped > 0)
        let (pong, _) = try #require(hub.request(.ping(nonce: [7])))
        #expect(pong.body == .pong([7]))
        #expect(hub.decoder.counters.sequenceGaps >= 1)
        let (status, _) = try #require(hub.request(.getStatus))
        guard case .status(let st) = status.body else { Issue.record("no status"); return }
        #expect(st.framesDropped > 0)
    }

    @Test func theSameSeedPlaysTheSameSamples() throws {
        func firstBlocks(seed: UInt64) throws -> [UInt64: [Int32]] {
            let pod = try Self.pod(speed: 50, seed: seed)
            let path = try pod.start()
            defer { pod.stop() }
            let hub = try HubLink(path: path)
            _ = try Self.handshake(hub)
            _ = hub.request(.startStream(.piezo))
            var count = 0
            _ = hub.wait { f in
                if f.piezo?.side == .left { count += 1 }
                return count >= 30
            }
            var out: [UInt64: [Int32]] = [:]
            for b in hub.frames.compactMap(\.piezo) where b.side == .left { out[b.firstTick] = b.samples }
            return out
        }
        let a = try firstBlocks(seed: 11), b = try firstBlocks(seed: 11), c = try firstBlocks(seed: 12)
        let common = Set(a.keys).intersection(b.keys)
        #expect(common.count >= 10)
        #expect(common.allSatisfy { a[$0] == b[$0] })
        let other = Set(a.keys).intersection(c.keys)
        #expect(!other.isEmpty && other.allSatisfy { a[$0] != c[$0] })
    }
}
