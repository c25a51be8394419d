import TestSupport
import Foundation
import SleepDomain
import Hub
import Logging
import PodDevice
import PodProtocol
import SleepSchedule
import Testing
import VirtualPod

/// The daemon's control and read sides against the virtual pod (firmware only, no night),
/// the way the API and MQTT use them: commands by serial answered with the pod's ack or
/// nack, the manual schedule pushed through the schedule service, and every acknowledged
/// SET_CLOCK (not only the start-up one) on the bus and in the state.
@Suite(.serialized) struct HubControlTests {
    struct Running {
        let daemon: HubDaemon
        let pod: VirtualPod
        let task: Task<Void, any Error>
        let dir: ScheduleTempDir
        let lines: ReportedLines
        let heard: BusRecorder

        func stop() async {
            task.cancel()
            _ = await task.result
            pod.stop()
            dir.cleanup()
        }
    }

    static func start(serial: String, zone: String, start: Date, speed: Double,
                      configure: (inout HubConfiguration) -> Void = { _ in }) async throws -> Running {
        let dir = try ScheduleTempDir()
        let link = dir.path("pod-link")
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: serial, sides: 2, channelsPerSide: 1),
            speed: speed, replay: [], linkPath: link, stopsAtEnd: false))
        try pod.start()
        var config = HubConfiguration()
        config.stateDirectory = dir.path("state")
        config.timeZone = zone
        config.pod.path = link
        configure(&config)
        let lines = ReportedLines()
        let reporter = HubReporter(logger: Logger(label: "hub-control-test") { _ in CapturingLogHandler(sink: lines) },
                                   console: false)
        let daemon = try await HubDaemon.assemble(configuration: config, clock: HubClock(start: start, speed: speed),
                                                  reporter: reporter)
        let heard = BusRecorder(daemon.bus.subscribe(name: "test", bufferSize: 100_000))
        let task = Task { try await daemon.run(stopSignals: nil) }
        return Running(daemon: daemon, pod: pod, task: task, dir: dir, lines: lines, heard: heard)
    }

    @Test func commandsReachThePodByItsSerialAndComeBackWithItsAnswer() async throws {
        // Noon: no power window or alarm of the default schedule comes near while this runs.
        let hub = try await Self.start(serial: "VPOD-CTL", zone: "UTC", start: Date(timeIntervalSince1970: 1_794_830_400),
                                       speed: 10)
        let control = hub.daemon.control
        #expect(await eventually { hub.daemon.bus.state.pods["VPOD-CTL"]?.connected == true && control.connectedSerials == ["VPOD-CTL"] },
                "never connected; the hub said \(hub.lines.all.suffix(10))")

        #expect(try await control.send(.power(side: .right, on: true, level: 40), toPod: "VPOD-CTL") == .ack)
        #expect(hub.pod.snapshot.powerOn == [false, true])
        // Nothing is ringing: the pod refuses the snooze, and says why.
        let snooze = try await control.send(.snooze(side: .left, seconds: 60), toPod: "VPOD-CTL")
        guard case .nack(let status, _) = snooze else { Issue.record("snooze of a silent alarm acknowledged"); return }
        #expect(status.lowercased().contains("not"), "status \(status)")

        await #expect(throws: HubControl.ControlError.unknownPod("NOPE")) {
            try await control.send(.stopAlarm(side: .left), toPod: "NOPE")
        }
        await #expect(throws: HubControl.ControlError.self) {
            try await control.send(.power(side: .left, on: true, level: 250), toPod: "VPOD-CTL")
        }
        #expect(hub.pod.snapshot.powerOn == [false, true], "an invalid command reached the pod")

        // A manual schedule set through the control side reaches the pod.
        _ = try await control.setManualSchedule(podSerial: "VPOD-CTL", sides: [.left], bedtime: "22:45", wake: "06:15")
        #expect(await eventually { hub.pod.currentSchedule(side: .left)?.alarm?.time == TimeOfDay(wrapping: 6 * 60 + 15) },
                "the pod holds \(String(describing: hub.pod.currentSchedule(side: .left)))")
        await #expect(throws: HubControl.ControlError.self) {
            try await control.setManualSchedule(podSerial: "VPOD-CTL", sides: [.left], bedtime: "25:00", wake: "06:15")
        }
        _ = try await control.clearManualSchedule(podSerial: "VPOD-CTL", sides: [.left])
        #expect(await eventually { hub.pod.currentSchedule(side: .left)?.alarm?.time != TimeOfDay(wrapping: 6 * 60 + 15) })
        await hub.stop()
        #expect(control.connectedSerials.isEmpty)
    }

    @Test func aClockSetAfterStartUpReachesTheBusAndTheState() async throws {
        // New York springs forward on 2026-03-08 at 07:00 UTC: the schedule service re-sends
        // SET_CLOCK with the new offset, outside the link's start-up.
        let transition = Date(timeIntervalSince1970: 1_772_953_200)
        let hub = try await Self.start(serial: "VPOD-CLK", zone: "America/New_York", start: transition.addingTimeInterval(-2400),
                                       speed: 100, configure: { $0.schedule.push.preTransitionLeadSeconds = 300 })
        #expect(await eventually { hub.daemon.bus.state.pods["VPOD-CLK"]?.clock?.utcOffsetMinutes == -240 },
                "the hub said \(hub.lines.all.suffix(10))")
        let offsets = hub.heard.soFar.compactMap { if case .clockSet(_, let a) = $0 { Int(a.utcOffsetMinutes) } else { nil } }
        #expect(offsets.first == -300 && offsets.last == -240, "clock anchors on the bus: \(offsets)")
        await hub.stop()
    }

    /// The pod keeps its power when the hub restarts (or its own schedule switches it): the
    /// new hub learns each side's power from the pod's status, asked soon after it connects,
    /// not from a command of its own (before: unknown until the next power command).
    @Test func aHubStartedAfterThePodWasSwitchedKnowsItsPower() async throws {
        let first = try await Self.start(serial: "VPOD-PWR", zone: "UTC", start: Date(timeIntervalSince1970: 1_794_830_400),
                                         speed: 10)
        #expect(await eventually { first.daemon.control.connectedSerials == ["VPOD-PWR"] },
                "never connected; the hub said \(first.lines.all.suffix(10))")
        #expect(try await first.daemon.control.send(.power(side: .right, on: true, level: 40), toPod: "VPOD-PWR") == .ack)
        first.task.cancel()
        _ = await first.task.result
        #expect(first.pod.snapshot.powerOn == [false, true])

        let lines = ReportedLines()
        let second = try await HubDaemon.assemble(
            configuration: first.daemon.configuration, clock: HubClock(start: Date(timeIntervalSince1970: 1_794_831_000), speed: 10),
            reporter: HubReporter(logger: Logger(label: "hub-control-test") { _ in CapturingLogHandler(sink: lines) }, console: false))
        let heard = BusRecorder(second.bus.subscribe(name: "test", bufferSize: 100_000))
        let task = Task { try await second.run(stopSignals: nil) }
        #expect(await eventually { second.bus.state.pods["VPOD-PWR"]?.power == [.left: false, .right: true] },
                "power \(String(describing: second.bus.state.pods["VPOD-PWR"]?.power)); the hub said \(lines.all.suffix(10))")
        let reported = heard.soFar.compactMap { if case .powerReported(_, let side, let on) = $0 { "\(side) \(on)" } else { nil } }
        #expect(reported == ["left false", "right true"], "reported: \(reported)")
        task.cancel()
        _ = await task.result
        first.pod.stop()
        first.dir.cleanup()
    }
}
