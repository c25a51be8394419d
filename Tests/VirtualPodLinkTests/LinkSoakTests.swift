// The link soak of issue 10: eight nights of the virtual pod at high speed, each with
// random faults (garbage, CRC errors, drops, stalls, unplug/replug, reboots with and without
// a lost BOOT), recorded by the hub as it would record them. Every night must be stored (a
// capture whose stream reaches the night's end) and the pod must end every night with the
// clock and schedule the hub wants. Memory figures are printed by `make bench`, not here.
import Foundation
import NightModel
import PodDevice
import PodProtocol
import Testing
import VirtualPod

/// A small deterministic generator (SplitMix64) for the faults of a night.
struct SoakRandom {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// One night's faults: one of each kind that loses or delays data, at random moments, plus
/// a reboot of each kind, between 10 % and 75 % of the night (the rest shows the recovery).
func soakFaults(night: Int, duration: Double) -> [ScheduledFault] {
    var random = SoakRandom(state: UInt64(night) &* 7919)
    let kinds: [Fault] = [.garbage(bytes: 48), .badCRC(frames: 2), .dropFrames(3), .stall(seconds: 0.3),
                          .disconnect(seconds: 0.4), .reboot(.watchdog), .silentReboot(.brownOut)]
    return kinds.map { fault in
        ScheduledFault(fault, at: duration * (0.1 + 0.65 * Double(random.below(1000)) / 1000))
    }
}

@Suite("link soak: eight nights with random faults")
struct LinkSoakTests {
    @Test("every night is stored and ends with the pod's clock and schedule in force")
    func eightNights() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("link-soak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // Simulated seconds per night, at 40× (15 s each): a lost BOOT costs the liveness
        // timeout (0.9 s real = 36 s of stream), an unplug its 0.4 s and the reconnect.
        let duration = 600.0
        for night in 1...8 {
            let link = dir.appendingPathComponent("pod\(night)").path
            let capture = dir.appendingPathComponent("night\(night).podcap").path
            let config = VirtualPodConfiguration(
                identity: VirtualPodIdentity(serial: "SOAK0001", channelsPerSide: 1),
                night: NightConfig(seed: UInt64(night), duration: duration, sides: [SideConfig(), .empty], noise: .normal,
                                   pumpVibration: false, channelsPerSide: 1),
                speed: 40, faults: soakFaults(night: night, duration: duration), linkPath: link)
            let pod = try VirtualPod(configuration: config)
            try pod.start()
            defer { pod.stop() }
            let recorder = try CaptureRecorder(path: capture)
            let connection = PodConnection(opener: PathOpener(path: link), timing: linkTiming, recorder: recorder,
                                           afterConnect: { c in _ = try await c.send(.setPowerSchedule(leftSchedule)) })
            let runner = Task { try await connection.run() }
            await pod.waitUntilFinished()
            let ended = pod.snapshot
            runner.cancel()
            _ = await runner.result

            // Stored: the capture holds the night, and its stream reaches the night's last minute.
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: capture)))
            let records = try Capture.read(bytes).records
            var piezoFrames = 0
            var lastPiezoTick: UInt64 = 0
            for record in records where record.direction == .podToHub {
                guard case .success(let frame) = FrameDecoder.parse(frame: record.frame),
                      case .piezo(let block) = frame.message else { continue }
                piezoFrames += 1
                lastPiezoTick = block.firstTick + UInt64(block.count)
            }
            // Ten blocks a second for the left side over most of the night (faults cost seconds).
            #expect(Double(piezoFrames) > 0.6 * duration * 10, "night \(night): \(piezoFrames) piezo blocks")
            #expect(ended.tick >= lastPiezoTick && ended.tick - lastPiezoTick < 60 * 500,
                    "night \(night): stream stopped \(Double(ended.tick) / 500 - Double(lastPiezoTick) / 500) s before the end")
            // Recovered from every reboot, announced or not: clock and schedule in force.
            #expect(ended.bootCount == 3, "night \(night)")
            #expect(ended.clock != nil, "night \(night)")
            #expect(ended.schedules.first?.power == leftSchedule, "night \(night)")
            let c = await connection.counters()
            #expect(c.podReboots + c.unannouncedReboots >= 1, "night \(night)")
        }
    }
}
