// The link's failure paths of issue 10 (items 2–6), each against the scripted pod over a
// real pty: a reboot whose BOOT is lost, final nacks, the request/answer race, HELLO's
// feature bits, an empty serial, STOP_STREAM on the way out.
import Foundation
import SleepDomain
import PodProtocol
import Testing
@testable import PodDevice

/// Liveness and refusal intervals short enough for a test, long next to a round trip.
let livenessTiming = LinkTiming(responseTimeout: .milliseconds(400), retries: 2, busyDelay: .milliseconds(5),
                                reconnectInitialDelay: .milliseconds(10), reconnectMaxDelay: .milliseconds(80), jitter: 0,
                                livenessTimeout: .milliseconds(600), refusedRetryDelay: .milliseconds(900))

func isRebooted(_ e: LinkEvent) -> Bool { if case .podRebooted = e { true } else { false } }
func isRefused(_ e: LinkEvent) -> Bool { if case .refused = e { true } else { false } }

@Suite("link recovery against a scripted pod over a pty")
struct LinkRecoveryTests {
    @Test("a reboot whose BOOT frame is lost is found by the liveness probe; the start-up runs again",
          arguments: [Status.noSession, .notReady])
    func lostBoot(noSession: Status) async throws {
        let pod = try ScriptedPod()
        await pod.set(noSessionStatus: noSession)  // v1.1 NO_SESSION, or a v1 pod's NOT_READY
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: livenessTiming, afterConnect: { c in
            _ = try await c.send(.setPowerSchedule(PowerSchedule(side: .left, days: .everyDay, on: TimeOfDay("22:30")!,
                                                                 off: TimeOfDay("07:00")!, level: 50)))
        })
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isStreaming) != nil)

        await pod.rebootSilently()
        #expect(await next(&events, where: isRebooted) != nil)
        #expect(await next(&events, where: isStreaming) != nil)
        // The same link, handshaken again: clock and schedule re-sent.
        #expect(await pod.count(of: .hello) == 2)
        #expect(await pod.count(of: .setClock) == 2)
        #expect(await pod.count(of: .setPowerSchedule) == 2)
        #expect(await pod.count(of: .getStatus) >= 1)
        let c = await connection.counters()
        #expect(c.unannouncedReboots == 1)
        #expect(c.reconnects == 0)
        #expect(await connection.info?.bootCount == 2)
    }

    @Test("a final nack of START_STREAM is reported and asked again after the long interval, not in a loop")
    func refusedStream() async throws {
        let pod = try ScriptedPod()
        await pod.setRefuse(.startStream, .internalError)
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: livenessTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        guard case .refused(let error, let retryIn)? = await next(&events, where: isRefused) else {
            Issue.record("no refusal reported"); return
        }
        #expect(error == .nack(request: .startStream, status: .internalError))
        #expect(retryIn == livenessTiming.refusedRetryDelay)
        #expect(await next(&events, where: isRefused) != nil)  // asked again once the interval passed
        // The link stays up (clock and schedules work without a stream): one handshake, and
        // exactly one START_STREAM per refusal so far (the second refusal's, or a third).
        #expect(await pod.count(of: .hello) == 1)
        #expect(await pod.count(of: .startStream) <= 3)
        await pod.setRefuse(.startStream, .ok)
        #expect(await next(&events, where: isStreaming) != nil)
    }

    @Test("a final nack of HELLO waits the long interval before the next attempt")
    func refusedHello() async throws {
        let pod = try ScriptedPod()
        await pod.setRefuse(.hello, .internalError)
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: livenessTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isRefused) != nil)
        guard case .retrying(_, let delay, let reason)? = await next(&events, where: { if case .retrying = $0 { true } else { false } }) else {
            Issue.record("no retry"); return
        }
        #expect(delay == livenessTiming.refusedRetryDelay)
        #expect(reason.description.contains("internal error"))
    }

    @Test("HELLO with an empty serial is refused with a clear error, never accepted")
    func emptySerial() async throws {
        let pod = try ScriptedPod()
        await pod.set(reportedSerial: "")
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: livenessTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        guard case .refused(let error, _)? = await next(&events, where: isRefused) else {
            Issue.record("no refusal"); return
        }
        #expect("\(error)".contains("serial length"))
        #expect(await connection.info == nil)
        #expect(await pod.count(of: .setClock) == 0)
    }

    @Test("every answer is matched to its request: no retransmit, no late answer over many quick requests")
    func noSpuriousRetransmit() async throws {
        let pod = try ScriptedPod()
        await pod.start()
        // A timeout far beyond any round trip: a retransmit here can only be the race.
        let timing = LinkTiming(responseTimeout: .seconds(20), retries: 1, livenessTimeout: .seconds(600))
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: timing)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isStreaming) != nil)
        for i in 0..<400 {
            let nonce: [UInt8] = [UInt8(i & 0xFF), UInt8(i >> 8)]
            let response = try await connection.send(.ping(nonce: nonce))
            #expect(response.body == .pong(nonce))
        }
        let c = await connection.counters()
        #expect(c.retransmits == 0)
        #expect(c.lateResponses == 0)
        #expect(await pod.requests.filter { $0.header.flags.contains(.retransmit) }.isEmpty)
    }

    @Test("a pod without the alarm or power-stage feature is never sent SET_ALARM or SET_POWER_SCHEDULE")
    func featureBits() async throws {
        let pod = try ScriptedPod()
        await pod.set(features: [.piezo, .capacitance])
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: livenessTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel(); Task { await pod.unplug() } }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isStreaming) != nil)
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("07:00")!, intensity: 50, pattern: .rise,
                                 durationSeconds: 60)
        await #expect(throws: PodLinkError.unsupportedByPod(request: .setAlarm, feature: "vibration alarm")) {
            _ = try await connection.send(.setAlarm(alarm))
        }
        await #expect(throws: PodLinkError.unsupportedByPod(request: .triggerAlarm, feature: "alarm trigger")) {
            try await connection.triggerAlarm(AlarmTrigger(side: .left, intensity: 50, pattern: .rise, durationSeconds: 60))
        }
        let schedule = PowerSchedule(side: .left, days: .everyDay, on: TimeOfDay("22:00")!, off: TimeOfDay("06:00")!, level: 40)
        await #expect(throws: PodLinkError.self) { _ = try await connection.send(.setPowerSchedule(schedule)) }
        _ = try await connection.send(.ping(nonce: [7]))  // the link is fine
        #expect(await pod.count(of: .setAlarm) == 0)
        #expect(await pod.count(of: .setPowerSchedule) == 0)
        #expect(await pod.count(of: .triggerAlarm) == 0)
    }

    @Test("stopping the connection sends STOP_STREAM before the link closes")
    func stopStreamOnClose() async throws {
        let pod = try ScriptedPod()
        await pod.start()
        let connection = PodConnection(opener: PathOpener(path: pod.path), timing: livenessTiming)
        let runner = Task { try await connection.run() }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isStreaming) != nil)
        runner.cancel()
        _ = await runner.result
        let types = await pod.requests.map(\.header.type)
        #expect(types.last == MessageType.stopStream.rawValue)
        await pod.unplug()
    }
}
