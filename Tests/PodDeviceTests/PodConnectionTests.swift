import Foundation
import PodProtocol
import Synchronization
import Testing
import TestSupport
@testable import PodDevice
import SleepDomain

/// Short timeouts so failure paths are quick; no assertion depends on them being met.
/// The liveness probe is kept out of these tests' way (the scripted pod is silent after the
/// handshake); `LinkRecoveryTests` exercises it.
let quickTiming = LinkTiming(responseTimeout: .milliseconds(300), retries: 2, busyDelay: .milliseconds(5),
                             reconnectInitialDelay: .milliseconds(10), reconnectMaxDelay: .milliseconds(80), jitter: 0,
                             livenessTimeout: .seconds(600))

/// Reads events until one matches; nil if the stream ended first.
func next(_ events: inout AsyncStream<LinkEvent>.Iterator, where match: (LinkEvent) -> Bool) async -> LinkEvent? {
    while let event = await events.next() {
        if match(event) { return event }
    }
    return nil
}

func isStreaming(_ e: LinkEvent) -> Bool { if case .streaming = e { true } else { false } }

/// A tty path that survives the pod going away and coming back on a new pty.
final class StableLink: Sendable {
    let path: String
    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("pod-\(UUID().uuidString)").path
    }
    func point(to target: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

@Suite("connection manager against a scripted pod over a pty")
struct PodConnectionTests {
    @Test("handshake: HELLO, SET_CLOCK, after-connect hook, START_STREAM, in that order")
    func handshake() async throws {
        let pod = try ScriptedPod()
        await pod.start()
        let fixedClock = ClockSetting(unixMillis: 1_760_000_000_000, utcOffsetMinutes: 120)
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: quickTiming, clock: { fixedClock }, afterConnect: { c in
            _ = try await c.send(.setPowerSchedule(PowerSchedule(side: .left, days: .everyDay, on: TimeOfDay("22:30")!, off: TimeOfDay("07:00")!, level: 50)))
        })
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        guard case .connected(let info, _)? = await next(&events, where: { if case .connected = $0 { true } else { false } }) else {
            Issue.record("never connected"); return
        }
        #expect(info.serial == "PB0001")
        #expect(info.firmware == FirmwareVersion(1, 4, 2))
        guard case .clockSet(let anchor)? = await next(&events, where: { if case .clockSet = $0 { true } else { false } }) else {
            Issue.record("no clock"); return
        }
        #expect(anchor.unixMillis == fixedClock.unixMillis)
        #expect(anchor.utcOffsetMinutes == 120)
        #expect(await next(&events, where: isStreaming) != nil)
        let types = await pod.requests.map(\.header.type)
        #expect(types == [MessageType.hello, .setClock, .setPowerSchedule, .startStream].map(\.rawValue))
        #expect(await connection.serial == "PB0001")
    }

    @Test("a sink takes every event in order, the stream ends at once, and the last is .stopped")
    func aSinkTakesTheEvents() async throws {
        let pod = try ScriptedPod()
        await pod.start()
        let taken = Mutex<[LinkEvent]>([])
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: quickTiming,
                                       sink: { event in taken.withLock { $0.append(event) } })
        var stream = connection.events.makeAsyncIterator()
        #expect(await stream.next() == nil, "the events went to the sink")
        let runner = Task { try await connection.run() }
        func has(_ match: (LinkEvent) -> Bool) -> Bool { taken.withLock { $0.contains(where: match) } }
        #expect(await eventually { has(isStreaming) }, "\(taken.withLock { $0 })")
        runner.cancel()
        _ = try? await runner.value
        await pod.unplug()
        let all = taken.withLock { $0 }
        guard case .connecting? = all.first, case .stopped(nil)? = all.last else {
            Issue.record("from .connecting to .stopped: \(all)"); return
        }
        let connected = all.firstIndex { if case .connected = $0 { true } else { false } }
        let streaming = all.firstIndex(where: isStreaming)
        #expect(connected != nil && streaming != nil && connected! < streaming!, "\(all)")
    }

    @Test("a pod without a common protocol version stops the connection with a clear error")
    func versionMismatch() async throws {
        let pod = try ScriptedPod(protocolVersion: 9)
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: quickTiming)
        await #expect {
            try await connection.run()
        } throws: { error in
            guard case .protocolVersionMismatch = error as? PodLinkError else { return false }
            return "\(error)".contains("protocol version mismatch")
        }
        #expect(await pod.count(of: .setClock) == 0)  // nothing but HELLO before a good HELLO
        await pod.unplug()
    }

    @Test("a request without an answer is re-sent with RETRANSMIT and the same id, then times out")
    func timeoutAndRetry() async throws {
        let pod = try ScriptedPod()
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: quickTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        _ = await next(&events, where: isStreaming)

        // Two lost answers, then the pod answers the second retransmit: success.
        await pod.setIgnore(.getStatus, 2)
        let response = try await connection.send(.getStatus)
        #expect(response.status == .ok)
        let statusFrames = await pod.requests.filter { $0.header.type == MessageType.getStatus.rawValue }
        #expect(statusFrames.count == 3)
        #expect(Set(statusFrames.map(\.header.requestID)).count == 1)
        #expect(statusFrames.map { $0.header.flags.contains(.retransmit) } == [false, true, true])

        // Never answered: 1 + 2 retries, then a timeout error.
        await pod.setIgnore(.ping, 100)
        await #expect(throws: PodLinkError.timeout(request: .ping, attempts: 3)) {
            _ = try await connection.send(.ping(nonce: [1, 2, 3]))
        }
        let counters = await connection.counters()
        #expect(counters.retransmits == 4)
        #expect(counters.timeouts == 1)
    }

    @Test("a nack surfaces the pod's status code")
    func nack() async throws {
        let pod = try ScriptedPod()
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: quickTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        _ = await next(&events, where: isStreaming)
        await pod.setRefuse(.setAlarm, .notReady)
        let alarm = AlarmSetting(side: .right, days: .mondayToFriday, time: TimeOfDay("06:45")!, intensity: 80, pattern: AlarmPattern.allCases[0], durationSeconds: 60)
        await #expect(throws: PodLinkError.nack(request: .setAlarm, status: .notReady)) {
            _ = try await connection.send(.setAlarm(alarm))
        }
        #expect(await connection.counters().nacks == 1)
    }

    @Test("unplugged mid-stream, the same serial on a new tty is reconnected, handshaken and streamed again")
    func reconnectSameSerial() async throws {
        let link = StableLink()
        defer { link.remove() }
        let first = try ScriptedPod(serial: "PB0007")
        await first.start()
        try link.point(to: first.path)
        let schedulesSent = Mutex(0)
        let connection = PodConnection(opener: PathOpener(path: link.path), timing: quickTiming, afterConnect: { c in
            schedulesSent.withLock { $0 += 1 }
            _ = try await c.send(.setPowerSchedule(PowerSchedule(side: .left, days: .everyDay, on: TimeOfDay("22:00")!, off: TimeOfDay("06:30")!, level: 40)))
        })
        let runner = Task { try await connection.run() }
        defer { runner.cancel() }
        var events = connection.events.makeAsyncIterator()
        _ = await next(&events, where: isStreaming)
        for _ in 0..<5 { await first.sendPiezo() }
        var frames = 0
        while frames < 5, let e = await events.next() { if case .frame = e { frames += 1 } }

        await first.unplug()
        link.remove()
        #expect(await next(&events, where: { if case .disconnected = $0 { true } else { false } }) != nil)
        #expect(await next(&events, where: { if case .retrying = $0 { true } else { false } }) != nil)

        // A pod with another serial at the same path is refused; the right one is accepted.
        let stranger = try ScriptedPod(serial: "OTHER")
        await stranger.start()
        try link.point(to: stranger.path)
        guard case .retrying(_, _, let reason)? = await next(&events, where: {
            if case .retrying(_, _, let r) = $0 { r.description.contains("expected pod") } else { false }
        }) else { Issue.record("stranger not refused"); return }
        #expect(reason.description.contains("OTHER"))
        await stranger.unplug()

        let again = try ScriptedPod(serial: "PB0007")
        await again.start()
        try link.point(to: again.path)
        defer { Task { await again.unplug() } }
        _ = await next(&events, where: isStreaming)
        #expect(await again.count(of: .hello) == 1)
        #expect(await again.count(of: .setClock) == 1)
        #expect(await again.count(of: .setPowerSchedule) == 1)
        #expect(schedulesSent.withLock { $0 } == 2)
        await again.sendPiezo()
        #expect(await next(&events, where: { if case .frame = $0 { true } else { false } }) != nil)
        let counters = await connection.counters()
        #expect(counters.reconnects == 1)
        #expect(counters.frames >= 6)
    }

    /// The start-up goes on after `.connected` (the daemon's hook, START_STREAM): a pod lost
    /// there must still be reported lost, or the daemon takes it for connected until it
    /// comes back (seen as a schedule driver "in sync" with an unplugged pod).
    @Test("unplugged during the after-connect hook: the connected pod is reported disconnected, its return is a reconnect")
    func unpluggedDuringStartUp() async throws {
        let link = StableLink()
        defer { link.remove() }
        let first = try ScriptedPod(serial: "PB0009")
        await first.start()
        try link.point(to: first.path)
        let hooks = Mutex(0)
        let connection = PodConnection(opener: PathOpener(path: link.path), timing: quickTiming, afterConnect: { _ in
            // The first start-up loses its pod in the hook; later ones go through.
            if hooks.withLock({ n in defer { n += 1 }; return n }) == 0 {
                await first.unplug()
                link.remove()
            }
        })
        let runner = Task { try await connection.run() }
        defer { runner.cancel() }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: { if case .connected = $0 { true } else { false } }) != nil)
        let after = await next(&events, where: {
            switch $0 { case .disconnected, .retrying: true; default: false }
        })
        guard case .disconnected? = after else {
            Issue.record("after .connected came \(String(describing: after)), not .disconnected")
            return
        }
        #expect(await next(&events, where: { if case .retrying = $0 { true } else { false } }) != nil)

        let again = try ScriptedPod(serial: "PB0009")
        await again.start()
        try link.point(to: again.path)
        defer { Task { await again.unplug() } }
        _ = await next(&events, where: isStreaming)
        #expect(await connection.counters().reconnects == 1)
    }

    @Test("a pod reboot (BOOT event) re-runs the start-up: clock and schedule are sent again")
    func podReboot() async throws {
        let pod = try ScriptedPod()
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: quickTiming, afterConnect: { c in
            _ = try await c.send(.setPowerSchedule(PowerSchedule(side: .right, days: .saturdayAndSunday, on: TimeOfDay("23:15")!, off: TimeOfDay("08:00")!, level: 30)))
        })
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        _ = await next(&events, where: isStreaming)
        await pod.sendPiezo()
        await pod.reboot()
        #expect(await next(&events, where: { if case .podRebooted = $0 { true } else { false } }) != nil)
        _ = await next(&events, where: isStreaming)
        #expect(await pod.count(of: .hello) == 2)
        #expect(await pod.count(of: .setClock) == 2)
        #expect(await pod.count(of: .setPowerSchedule) == 2)
        #expect(await pod.count(of: .startStream) == 2)
        let counters = await connection.counters()
        #expect(counters.podReboots == 1)
        #expect(counters.droppedFrames == 0)  // BOOT restarts the sequence without a gap
        #expect(counters.reconnects == 0)
    }

    @Test("a BOOT that arrives before HELLO is answered does not run the start-up twice")
    func bootDuringHandshake() async throws {
        let pod = try ScriptedPod()
        await pod.setBootBeforeHello()
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: quickTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        _ = await next(&events, where: isStreaming)
        _ = try await connection.send(.getStatus)
        #expect(await pod.count(of: .hello) == 1)
        #expect(await pod.count(of: .setClock) == 1)
        #expect(await connection.counters().podReboots == 1)
    }

    @Test("garbage, a bad CRC and lost frames are counted while valid frames keep flowing")
    func faultsCounted() async throws {
        let pod = try ScriptedPod()
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: quickTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        _ = await next(&events, where: isStreaming)
        await pod.sendPiezo()
        await pod.sendGarbage([0x13, 0x37, 0xFF, 0x42, 0x00, 0x05, 0x00])
        await pod.sendPiezo()
        await pod.sendCorruptPiezo()
        await pod.sendPiezo()
        await pod.loseFrames(3)
        await pod.sendPiezo()
        var ticks: [UInt64] = []
        while ticks.count < 4, let e = await events.next() {
            if case .frame(let f, _) = e, case .piezo(let block) = f.message { ticks.append(block.firstTick) }
        }
        #expect(ticks == [0, 50, 103, 153])
        let c = await connection.counters()
        #expect(c.crcErrors == 1)
        #expect(c.malformed >= 1)
        // The corrupt frame used a sequence number and 3 were skipped: 4 frames lost, 2 gaps.
        #expect(c.droppedFrames == 4)
        #expect(c.sequenceGaps == 2)
    }
}

extension ScriptedPod {
    func setIgnore(_ type: MessageType, _ count: Int) { ignore[type] = count }
    func setBootBeforeHello() { bootBeforeHello = true }
    func setRefuse(_ type: MessageType, _ status: Status) { refuse[type] = status }
}
