// The conformance scenarios of firmware-protocol.md §10.1: the hub's link (PodConnection)
// against a scripted pod over a real pty, one row per scenario a second implementation of
// the pod ran against the hub (issue 49). A row says what the pod does and what the hub must
// then do; the next ambiguity found shows up as a failing row. Rows wait on conditions (the
// events the hub reports, the requests the pod received), never on fixed sleeps.
import Foundation
import PodProtocol
import Synchronization
import Testing
import TestSupport
@testable import PodDevice
import SleepDomain

/// Short timeouts, long next to a round trip; the liveness timeout is long unless a row needs it.
let conformanceTiming = LinkTiming(responseTimeout: .milliseconds(400), retries: 2, busyDelay: .milliseconds(5),
                                   reconnectInitialDelay: .milliseconds(10), reconnectMaxDelay: .milliseconds(80), jitter: 0,
                                   livenessTimeout: .seconds(600), refusedRetryDelay: .milliseconds(900))

/// Every event a connection reported, in order.
final class EventLog: Sendable {
    let events = Mutex<[LinkEvent]>([])
    func append(_ event: LinkEvent) { events.withLock { $0.append(event) } }
}

/// One hub against one scripted pod, with every event the hub reported.
final class ConformanceLink: Sendable {
    let pod: ScriptedPod
    let connection: PodConnection
    let timing: LinkTiming
    private let taken = EventLog()
    private let runner = Mutex<Task<Void, any Error>?>(nil)

    init(pod: ScriptedPod, timing: LinkTiming) {
        self.pod = pod
        self.timing = timing
        let taken = self.taken
        connection = PodConnection(opener: PathOpener(path: pod.path), timing: timing, sink: { taken.append($0) })
    }

    func start() async {
        await pod.start()
        let connection = self.connection
        runner.withLock { $0 = Task { try await connection.run() } }
    }

    func stop() async {
        let task = runner.withLock { $0 }
        task?.cancel()
        _ = await task?.result
        await pod.unplug()
    }

    var events: [LinkEvent] { taken.events.withLock { $0 } }
    func count(_ match: (LinkEvent) -> Bool) -> Int { events.filter(match).count }
    /// Waits until `n` events match (bounded by `eventually`'s generous deadline).
    func waitFor(_ n: Int = 1, _ match: @escaping @Sendable (LinkEvent) -> Bool) async -> Bool {
        await eventually { self.count(match) >= n }
    }
    func streamingUp(_ n: Int = 1) async -> Bool { await waitFor(n, isStreaming) }
    /// The reboot reasons the hub reported, in order.
    var reboots: [RebootEvidence] {
        events.compactMap { if case .podRebooted(let e) = $0 { e } else { nil } }
    }
    func requests(of type: MessageType) async -> [DecodedFrame] {
        await pod.requests.filter { $0.header.type == type.rawValue }
    }
}

/// One scenario: its name, the pod's set-up before the hub connects, and what happens then.
struct ConformanceRow: Sendable, CustomTestStringConvertible {
    let name: String
    var timing = conformanceTiming
    var pod: @Sendable (isolated ScriptedPod) -> Void = { _ in }
    let check: @Sendable (ConformanceLink) async throws -> Void
    var testDescription: String { name }
}

let alarmForConformance = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("07:00")!, intensity: 50, pattern: .rise,
                                       durationSeconds: 60)
let triggerForConformance = AlarmTrigger(side: .left, intensity: 50, pattern: .rise, durationSeconds: 60)

/// A LOG frame whose stuffed form ends with a full 254-byte COBS block (§3.1's trailing-byte
/// case), with `sequence`: tick bytes all non-zero, text length chosen so the last zero of the
/// frame is in the header, and a text whose CRC holds no zero byte.
func fullBlockLogFrame(sequence: UInt16) throws -> [UInt8] {
    for variant in UInt8(0x41)...UInt8(0x7A) {
        var payload: [UInt8] = Array(repeating: 0x01, count: 8) + [1]  // tick 0x0101…, level info
        payload += Array(repeating: variant, count: 241)
        let frame = try FrameEncoder.frame(header: FrameHeader(sequence: sequence, type: MessageType.log.rawValue, requestID: 0),
                                           payload: payload)
        if let lastZero = frame.lastIndex(of: 0), frame.count - lastZero - 1 == 254 { return frame }
    }
    throw TestbedError(description: "no LOG frame of that shape")
}

extension ConformanceRow {
    static let all: [ConformanceRow] = [
        ConformanceRow(name: "liveness: a silent pod is probed once the silence reaches the timeout, not before",
                       timing: { var t = conformanceTiming; t.livenessTimeout = .milliseconds(600); return t }()) { link in
            #expect(await link.streamingUp())
            // The first status is asked at once after the start-up; the one after it is the probe.
            #expect(await eventually { await link.requests(of: .getStatus).count >= 2 })
            let frames = await link.pod.requests
            let arrivals = await link.pod.arrivals
            let statuses = frames.indices.filter { frames[$0].header.type == MessageType.getStatus.rawValue }
            let i = statuses[1]
            // The pod's last frame before the probe answered the request before it, on arrival.
            #expect(arrivals[i] - arrivals[i - 1] >= link.timing.livenessTimeout, "probed before the timeout")
            #expect(await link.connection.counters().livenessProbes >= 1)
        },
        ConformanceRow(name: "lost BOOT on a v1.1 pod: NO_SESSION to the probe, start-up again on the same link",
                       timing: { var t = conformanceTiming; t.livenessTimeout = .milliseconds(600); return t }()) { link in
            #expect(await link.streamingUp())
            await link.pod.rebootSilently()
            #expect(await link.streamingUp(2))
            #expect(link.reboots == [.noSession(.noSession)])
            #expect(await link.pod.count(of: .hello) == 2)
            #expect(await link.connection.counters().reconnects == 0)
        },
        ConformanceRow(name: "lost BOOT on a v1.0 pod: NOT_READY to the probe, start-up again",
                       timing: { var t = conformanceTiming; t.livenessTimeout = .milliseconds(600); return t }(),
                       pod: { $0.noSessionStatus = .notReady; $0.speaksMinor = nil }) { link in
            #expect(await link.streamingUp())
            await link.pod.rebootSilently()
            #expect(await link.streamingUp(2))
            #expect(link.reboots == [.noSession(.notReady)])
            #expect(RebootEvidence.noSession(.notReady).description == "NOT_READY")
        },
        ConformanceRow(name: "another boot count in a status: the reset is found that way and named so",
                       timing: { var t = conformanceTiming; t.livenessTimeout = .milliseconds(600); return t }()) { link in
            #expect(await link.streamingUp())
            await link.pod.bumpBootCountKeepingSession()
            #expect(await link.streamingUp(2))
            #expect(link.reboots == [.bootCount(from: 1, to: 2)])
            #expect(RebootEvidence.bootCount(from: 1, to: 2).description == "boot count 1 → 2")
        },
        ConformanceRow(name: "a BOOT event: start-up again, named BOOT event") { link in
            #expect(await link.streamingUp())
            await link.pod.reboot()
            #expect(await link.streamingUp(2))
            #expect(link.reboots == [.bootEvent])
            #expect(await link.connection.counters().unannouncedReboots == 0)
        },
        ConformanceRow(name: "BUSY: asked again after the delay with a new id and no RETRANSMIT flag",
                       pod: { $0.refuseTimes[.ping] = (.busy, 1) }) { link in
            #expect(await link.streamingUp())
            let answer = try await link.connection.send(.ping(nonce: [1]))
            #expect(answer.body == .pong([1]))
            let pings = await link.requests(of: .ping)
            #expect(pings.count == 2)
            #expect(Set(pings.map(\.header.requestID)).count == 2)
            #expect(pings.allSatisfy { !$0.header.flags.contains(.retransmit) })
        },
        ConformanceRow(name: "feature bits: no SET_ALARM, SET_POWER_SCHEDULE or TRIGGER_ALARM to a pod without them",
                       pod: { $0.features = [.piezo, .capacitance] }) { link in
            #expect(await link.streamingUp())
            await #expect(throws: PodLinkError.unsupportedByPod(request: .setAlarm, feature: "vibration alarm")) {
                _ = try await link.connection.send(.setAlarm(alarmForConformance))
            }
            await #expect(throws: PodLinkError.self) { try await link.connection.triggerAlarm(triggerForConformance) }
            #expect(await link.pod.count(of: .setAlarm) == 0)
            #expect(await link.pod.count(of: .triggerAlarm) == 0)
        },
        ConformanceRow(name: "a v1.0 link carries v1.0 messages only: no TRIGGER_ALARM though bit 7 is set",
                       pod: { $0.speaksMinor = nil }) { link in
            #expect(await link.streamingUp())
            let info = await link.connection.info
            #expect(info?.minor == 0 && info?.features.contains(.alarmTrigger) == true)
            await #expect(throws: PodLinkError.unsupportedByPod(request: .triggerAlarm, feature: "alarm trigger on a v1.0 link")) {
                try await link.connection.triggerAlarm(triggerForConformance)
            }
            #expect(await link.pod.count(of: .triggerAlarm) == 0)
        },
        ConformanceRow(name: "a v1.1 link with bit 7 gets TRIGGER_ALARM") { link in
            #expect(await link.streamingUp())
            #expect(await link.connection.info?.minor == 1)
            try await link.connection.triggerAlarm(triggerForConformance)
            #expect(await link.pod.count(of: .triggerAlarm) == 1)
        },
        ConformanceRow(name: "sides and channels beyond HELLO: dropped and counted as malformed",
                       pod: { $0.sides = 1 }) { link in
            #expect(await link.streamingUp())
            let samples: [Int32] = Array(repeating: 5, count: 20)
            await link.pod.send(.piezo(PiezoBlock(side: .right, channels: 1, gain: 1, firstTick: 10, samples: samples)))
            await link.pod.send(.piezo(PiezoBlock(side: .left, channels: 2, gain: 1, firstTick: 20, samples: samples)))
            await link.pod.send(.piezo(PiezoBlock(side: .left, channels: 1, gain: 1, firstTick: 30, samples: samples)))
            #expect(await link.waitFor { if case .frame(let f, _) = $0, case .piezo = f.message { true } else { false } })
            let piezo = link.events.compactMap { e -> PiezoBlock? in
                if case .frame(let f, _) = e, case .piezo(let b) = f.message { b } else { nil }
            }
            #expect(piezo.map(\.firstTick) == [30])
            #expect(await link.connection.counters().beyondAnnounced == 2)
        },
        ConformanceRow(name: "reordering: 10, 11, 5, 12, 13 is one frame out of order and no drops") { link in
            #expect(await link.streamingUp())
            let before = await link.connection.counters()
            let s = await link.pod.nextSequence
            for (i, seq) in [s, s &+ 1, s &- 5, s &+ 2, s &+ 3].enumerated() {
                await link.pod.send(.log(LogLine(tick: UInt64(i), level: 1, text: "r\(i)")), sequence: seq)
            }
            #expect(await link.waitFor(5) { if case .frame(let f, _) = $0, case .log = f.message { true } else { false } })
            let after = await link.connection.counters()
            #expect(after.outOfOrder - before.outOfOrder == 1)
            #expect(after.droppedFrames == before.droppedFrames && after.sequenceGaps == before.sequenceGaps)
        },
        ConformanceRow(name: "NO_SESSION to a request: no probe; start-up, then the request once more with a new id") { link in
            #expect(await link.streamingUp())
            await link.pod.rebootSilently()
            let answer = try await link.connection.send(.setPower(PowerCommand(side: .left, on: true, level: 40)))
            #expect(answer.status == .ok)
            let types = await link.pod.requests.map(\.header.type)
            let first = try #require(types.firstIndex(of: MessageType.setPower.rawValue))
            let rest = Array(types[first...])
            #expect(rest.first(where: { $0 != MessageType.setPower.rawValue }) == MessageType.hello.rawValue, "no probe first")
            let setPowers = await link.requests(of: .setPower)
            #expect(setPowers.count == 2 && setPowers[0].header.requestID != setPowers[1].header.requestID)
            #expect(link.reboots == [.noSession(.noSession)])
            #expect(await link.pod.count(of: .hello) == 2)
        },
        ConformanceRow(name: "NOT_READY from a v1.0 pod with its session intact: probed, session kept, final",
                       pod: { $0.speaksMinor = nil; $0.refuse[.snooze] = .notReady }) { link in
            #expect(await link.streamingUp())
            await #expect(throws: PodLinkError.nack(request: .snooze, status: .notReady)) {
                _ = try await link.connection.send(.snooze(side: .left, seconds: 0))
            }
            #expect(await link.pod.count(of: .getStatus) == 1)
            #expect(await link.pod.count(of: .hello) == 1)
            #expect(await link.pod.count(of: .snooze) == 1)
            #expect(link.reboots.isEmpty)
        },
        ConformanceRow(name: "CLOCK_NOT_SET: reported to the caller as it is, no start-up, no probe",
                       pod: { $0.refuse[.setAlarm] = .clockNotSet }) { link in
            #expect(await link.streamingUp())
            await #expect(throws: PodLinkError.nack(request: .setAlarm, status: .clockNotSet)) {
                _ = try await link.connection.send(.setAlarm(alarmForConformance))
            }
            #expect(await link.pod.count(of: .hello) == 1)
            #expect(await link.pod.count(of: .getStatus) == 0)
        },
        ConformanceRow(name: "late answer: held until the retransmission, the first answer taken, the second counted late",
                       pod: { $0.withholdUntilRetransmit = [.ping] }) { link in
            #expect(await link.streamingUp())
            let answer = try await link.connection.send(.ping(nonce: [9]))
            #expect(answer.body == .pong([9]))
            #expect(await eventually { await link.connection.counters().lateResponses == 1 })
            #expect(await link.connection.counters().retransmits == 1)
        },
        ConformanceRow(name: "duplicate answer: one taken, the other counted late, nothing re-sent",
                       pod: { $0.answerTwice = [.ping] }) { link in
            #expect(await link.streamingUp())
            _ = try await link.connection.send(.ping(nonce: [3]))
            #expect(await eventually { await link.connection.counters().lateResponses == 1 })
            #expect(await link.connection.counters().retransmits == 0)
            _ = try await link.connection.send(.ping(nonce: [4]))  // the link goes on
        },
        ConformanceRow(name: "final nack of START_STREAM: the link stays, reported, asked again after the long interval",
                       timing: { var t = conformanceTiming; t.livenessTimeout = .milliseconds(600); return t }(),
                       pod: { $0.refuse[.startStream] = .internalError }) { link in
            #expect(await link.waitFor(2, isRefused))
            #expect(await link.pod.count(of: .hello) == 1)
            #expect(await link.pod.count(of: .startStream) >= 2)
        },
        ConformanceRow(name: "final nack of HELLO: closed, reported, reopened after the long interval",
                       pod: { $0.refuse[.hello] = .internalError }) { link in
            #expect(await link.waitFor { if case .retrying(_, let delay, _) = $0 { delay == conformanceTiming.refusedRetryDelay } else { false } })
            #expect(link.count(isRefused) >= 1)
            #expect(await link.pod.count(of: .setClock) == 0)
        },
        ConformanceRow(name: "HELLO answered UNSUPPORTED_VERSION: stopped with a clear error, never asked again",
                       pod: { $0.protocolVersion = 2 }) { link in
            #expect(await link.waitFor { if case .stopped(let e) = $0 { e != nil } else { false } })
            guard case .stopped(let error?)? = link.events.last else { Issue.record("not stopped"); return }
            #expect("\(error)".contains("protocol version mismatch"))
            #expect(await link.pod.count(of: .hello) == 1)
        },
        ConformanceRow(name: "COBS trailing byte: a frame ending in a full block arrives with and without the final 0x01") { link in
            #expect(await link.streamingUp())
            let firstSequence = await link.pod.nextSequence
            let frame = try fullBlockLogFrame(sequence: firstSequence)
            let canonical = COBS.encode(frame)  // with its delimiter
            // The canonical encoder writes the empty block 0x01 after the full one (§3.1).
            #expect(canonical.suffix(2) == [0x01, 0x00] && canonical[canonical.count - 257] == 0xFF)
            await link.pod.sendRaw(canonical)
            let secondSequence = await link.pod.nextSequence
            let second = try fullBlockLogFrame(sequence: secondSequence)
            await link.pod.sendRaw(Array(COBS.encode(second).dropLast(2)) + [0])  // without the 0x01
            #expect(await link.waitFor(2) { if case .frame(let f, _) = $0, case .log = f.message { true } else { false } })
            #expect(await link.connection.counters().malformed == 0)
        },
    ]
}

@Suite("conformance: the hub's link against a scripted pod, one row per scenario (spec §10.1)")
struct ConformanceTests {
    @Test(arguments: ConformanceRow.all)
    func row(_ row: ConformanceRow) async throws {
        let pod = try ScriptedPod()
        await pod.configure(row.pod)
        let link = ConformanceLink(pod: pod, timing: row.timing)
        await link.start()
        do {
            try await row.check(link)
        } catch {
            await link.stop()
            throw error
        }
        await link.stop()
    }

    @Test("the liveness clock looks at the link exactly when the silence reaches the timeout")
    func livenessCheckInstant() {
        let timing = LinkTiming(livenessTimeout: .seconds(3))
        let t0 = ContinuousClock.now
        // A frame 0.5 s ago: the silence reaches 3 s in 2.5 s (a streaming link is not looked at every second).
        #expect(timing.nextLivenessCheck(lastFrame: t0 - .milliseconds(500), now: t0) == t0 + .milliseconds(2500))
        #expect(timing.nextLivenessCheck(lastFrame: t0 - .milliseconds(2500), now: t0) == t0 + .milliseconds(500))
        #expect(timing.nextLivenessCheck(lastFrame: t0 - .milliseconds(2999), now: t0) == t0 + .milliseconds(1))
        // Silent already (a probe is out): one beat on, never a busy loop.
        #expect(timing.nextLivenessCheck(lastFrame: t0 - .seconds(5), now: t0) == t0 + .seconds(1))
        // A status check due sooner comes first; one already due (not yet handled) waits a beat, never spins.
        #expect(timing.nextLivenessCheck(lastFrame: t0 - .milliseconds(500), now: t0, due: t0 + .milliseconds(700))
                == t0 + .milliseconds(700))
        #expect(timing.nextLivenessCheck(lastFrame: t0 - .milliseconds(500), now: t0, due: t0 + .seconds(9)) == t0 + .milliseconds(2500))
        #expect(timing.nextLivenessCheck(lastFrame: t0 - .milliseconds(500), now: t0, due: t0) == t0 + .seconds(1))
    }
}
