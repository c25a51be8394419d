// The hub's link (PodConnection) against the virtual pod's firmware over a real pty, with
// the faults of issue 10: a reboot whose BOOT is lost, START_STREAM refused for good, a pod
// without the alarm feature, answers that arrive at the exact moment of the timeout; and
// protocol v1.1's TRIGGER_ALARM end to end.
import TestSupport
import Foundation
import SleepDomain
import NightModel
import PodDevice
import PodProtocol
import Testing
import VirtualPod

/// Timeouts that leave a loaded 2-core machine room; no assertion depends on them being met.
let linkTiming = LinkTiming(responseTimeout: .milliseconds(500), retries: 3, busyDelay: .milliseconds(5),
                            reconnectInitialDelay: .milliseconds(20), reconnectMaxDelay: .milliseconds(200), jitter: 0,
                            livenessTimeout: .milliseconds(900), refusedRetryDelay: .seconds(1))

/// A pod playing a quiet night at `speed`, long enough never to end during a test.
func makePod(serial: String = "LINK0001", features: FeatureSet = .all, speed: Double = 20,
             hours: Double = 8, faults: [ScheduledFault] = []) throws -> VirtualPod {
    let night = NightConfig(seed: 7, duration: hours * 3600, sides: [SideConfig(), .empty], noise: .normal,
                            pumpVibration: false, channelsPerSide: 1)
    return try VirtualPod(configuration: VirtualPodConfiguration(
        identity: VirtualPodIdentity(serial: serial, channelsPerSide: 1, features: features), night: night, speed: speed,
        faults: faults))
}

/// Reads events until one matches; nil if the stream ended first.
func next(_ events: inout AsyncStream<LinkEvent>.Iterator, where match: (LinkEvent) -> Bool) async -> LinkEvent? {
    while let event = await events.next() {
        if match(event) { return event }
    }
    return nil
}

func isStreaming(_ e: LinkEvent) -> Bool { if case .streaming = e { true } else { false } }
func isStatus(_ e: LinkEvent) -> Bool { if case .status = e { true } else { false } }
func isRebooted(_ e: LinkEvent) -> Bool { if case .podRebooted = e { true } else { false } }
func isRefused(_ e: LinkEvent) -> Bool { if case .refused = e { true } else { false } }

/// Polls `condition` until it holds or `seconds` pass (a generous bound, not a timing assertion).
let leftSchedule = PowerSchedule(side: .left, days: .everyDay, on: TimeOfDay("22:30")!, off: TimeOfDay("07:00")!, level: 40)

@Suite("hub link against the virtual pod: faults and recovery")
struct FaultRecoveryTests {
    @Test("a reboot whose BOOT is lost is recovered within the liveness timeout: clock and schedule sent again")
    func silentReboot() async throws {
        let pod = try makePod()
        let tty = try pod.start()
        defer { pod.stop() }
        let connection = PodConnection(opener: PathOpener(path: tty), timing: linkTiming, afterConnect: { c in
            _ = try await c.send(.setPowerSchedule(leftSchedule))
        })
        let runner = Task { try await connection.run() }
        defer { runner.cancel() }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isStreaming) != nil)
        #expect(pod.snapshot.bootCount == 1)

        pod.inject(.silentReboot(.watchdog))
        #expect(await eventually(30) { pod.snapshot.bootCount == 2 })
        #expect(await next(&events, where: isRebooted) != nil)
        #expect(await next(&events, where: isStreaming) != nil)
        let s = pod.snapshot
        #expect(s.clock != nil)
        #expect(s.linkReady && s.streaming == .all)
        #expect(pod.currentSchedule(side: .left)?.power == leftSchedule)
        #expect(s.faultDroppedFrames == 1)  // the BOOT frame
        let c = await connection.counters()
        #expect(c.unannouncedReboots == 1)
        #expect(c.reconnects == 0)
        #expect(await connection.info?.bootCount == 2)
    }

    @Test("START_STREAM refused for good is reported and asked again at the long interval, the link kept")
    func refusedStream() async throws {
        // Refusing from the pod's first round, before any hub can connect.
        let pod = try makePod(faults: [ScheduledFault(.refuseStream(.internalError), at: 0)])
        let tty = try pod.start()
        defer { pod.stop() }
        let connection = PodConnection(opener: PathOpener(path: tty), timing: linkTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel() }
        var events = connection.events.makeAsyncIterator()
        guard case .refused(let error, let retryIn)? = await next(&events, where: isRefused) else {
            Issue.record("no refusal"); return
        }
        #expect(error == .nack(request: .startStream, status: .internalError))
        #expect(retryIn == linkTiming.refusedRetryDelay)
        #expect(pod.snapshot.clock != nil)  // the rest of the start-up happened
        pod.inject(.refuseStream(nil))
        #expect(await next(&events, where: isStreaming) != nil)
        #expect(pod.snapshot.attachCount == 1)
        #expect(await connection.counters().reconnects == 0)
    }

    @Test("a pod without the alarm feature is sent no SET_ALARM and no TRIGGER_ALARM")
    func noAlarmFeature() async throws {
        let pod = try makePod(features: [.piezo, .capacitance, .environment, .powerSchedule, .log])
        let tty = try pod.start()
        defer { pod.stop() }
        let connection = PodConnection(opener: PathOpener(path: tty), timing: linkTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel() }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isStreaming) != nil)
        #expect(await next(&events, where: isStatus) != nil)  // the start-up's status, answered
        let answered = pod.snapshot.requestsAnswered
        let alarm = AlarmSetting(side: .left, days: .everyDay, time: TimeOfDay("07:00")!, intensity: 50, pattern: .rise,
                                 durationSeconds: 60)
        await #expect(throws: PodLinkError.unsupportedByPod(request: .setAlarm, feature: "vibration alarm")) {
            _ = try await connection.send(.setAlarm(alarm))
        }
        await #expect(throws: PodLinkError.unsupportedByPod(request: .triggerAlarm, feature: "alarm trigger")) {
            try await connection.triggerAlarm(AlarmTrigger(side: .left, intensity: 50, pattern: .rise, durationSeconds: 5))
        }
        _ = try await connection.send(.setPowerSchedule(leftSchedule))
        #expect(pod.snapshot.requestsAnswered == answered + 1)  // only the schedule reached the pod
    }

    @Test("answers that arrive at the exact moment of the timeout end the request: no retransmit after an answer")
    func answersAtTheTimeout() async throws {
        let pod = try makePod()
        let tty = try pod.start()
        defer { pod.stop() }
        let connection = PodConnection(opener: PathOpener(path: tty), timing: linkTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel() }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isStreaming) != nil)
        // The status the link asks for just after start-up, answered before the answers slow
        // down: the six pings are then the only requests (the next status is a minute on).
        #expect(await next(&events, where: isStatus) != nil)
        let before = await connection.counters()
        pod.inject(.answerDelay(seconds: 0.5))  // = linkTiming.responseTimeout
        for i in 0..<6 {
            let response = try await connection.send(.ping(nonce: [UInt8(i)]))
            #expect(response.body == .pong([UInt8(i)]))
        }
        let c = await connection.counters()
        #expect(c.timeouts == before.timeouts)
        // Each request went out at most twice (the answer to the first attempt was taken
        // when it came, whether just before or just after the retransmit).
        #expect(c.retransmits - before.retransmits <= 6)
        pod.inject(.answerDelay(seconds: 0))
    }

    @Test("TRIGGER_ALARM fires the side's alarm now over the link (v1.1)")
    func triggerAlarm() async throws {
        let pod = try makePod()
        let tty = try pod.start()
        defer { pod.stop() }
        let connection = PodConnection(opener: PathOpener(path: tty), timing: linkTiming)
        let runner = Task { try await connection.run() }
        defer { runner.cancel() }
        var events = connection.events.makeAsyncIterator()
        guard case .connected(let info, _)? = await next(&events, where: { if case .connected = $0 { true } else { false } }) else {
            Issue.record("never connected"); return
        }
        #expect(info.minor == 1 && info.features.contains(.alarmTrigger))
        #expect(await next(&events, where: isStreaming) != nil)
        try await connection.triggerAlarm(AlarmTrigger(side: .right, intensity: 70, pattern: .rise, durationSeconds: 30))
        #expect(pod.alarmsFired.last?.outcome == .triggered)
        #expect(pod.alarmsFired.last?.side == .right)
        guard case .frame(let frame, _)? = await next(&events, where: {
            if case .frame(let f, _) = $0, case .event(let e) = f.message, e.kind == .alarmStarted { true } else { false }
        }), case .event(let started) = frame.message else { Issue.record("no ALARM_STARTED"); return }
        #expect(started.side == .right && started.argument == 70)
    }

    @Test("stopping the hub's connection stops the pod's stream first")
    func stopStreamOnClose() async throws {
        let pod = try makePod()
        let tty = try pod.start()
        defer { pod.stop() }
        let connection = PodConnection(opener: PathOpener(path: tty), timing: linkTiming)
        let runner = Task { try await connection.run() }
        var events = connection.events.makeAsyncIterator()
        #expect(await next(&events, where: isStreaming) != nil)
        #expect(!pod.snapshot.streaming.isEmpty)
        runner.cancel()
        _ = await runner.result
        #expect(await eventually(30) { pod.snapshot.streaming.isEmpty })
    }
}
