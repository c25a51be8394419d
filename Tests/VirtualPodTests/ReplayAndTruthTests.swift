#if canImport(Glibc)
import Glibc
#endif
import Foundation
import NightModel
import PodProtocol
import Testing
@testable import VirtualPod

@Suite struct ReplayAndTruthTests {
    /// A capture of a pod streaming left-side piezo blocks every 100 ms from tick 10_000, with
    /// sequence 13 lost in the recording, plus a response and a hub request that are not replayed.
    static func capture() throws -> [Capture.Record] {
        var records: [Capture.Record] = []
        var seq: UInt16 = 10
        let t0: UInt64 = 1_767_225_600_000_000
        for k in 0..<20 {
            let samples = (0..<100).map { Int32(k * 1000 + $0) }
            let block = Message.piezo(PiezoBlock(side: .left, channels: 2, gain: 16, firstTick: 10_000 + UInt64(k) * 50, samples: samples))
            if k == 3 { seq += 1 }  // lost on the recorded link
            let header = FrameHeader(sequence: seq, type: block.typeCode)
            seq += 1
            var enc = FrameEncoder(firstSequence: header.sequence)
            let stuffed = try enc.encode(block)
            let frame = try #require(COBS.decode(Array(stuffed.dropLast())))
            records.append(Capture.Record(receivedMicros: t0 + UInt64(k) * 100_000, direction: .podToHub, frame: frame))
            if k == 5 {
                let ack = try FrameEncoder.frame(header: FrameHeader(sequence: seq, type: 0x89, requestID: 4), payload: [0])
                seq += 1
                records.append(Capture.Record(receivedMicros: t0 + 550_000, direction: .podToHub, frame: ack))
                let req = try FrameEncoder.frame(header: FrameHeader(sequence: 3, type: 0x03, requestID: 5), payload: [])
                records.append(Capture.Record(receivedMicros: t0 + 560_000, direction: .hubToPod, frame: req))
            }
        }
        return records
    }

    @Test func aReplayResendsTheRecordedStreamWithItsSpacingAndLosses() async throws {
        let records = try Self.capture()
        let replay = CaptureReplay(records: records)
        #expect(replay.items.count == 20)
        #expect(replay.skipped == 2)
        #expect(replay.tickBase == 10_000)
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(identity: PodIdentity(serial: "REPLAY1"),
                                                                        speed: 20, replay: records))
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try HubLink(path: path)
        _ = try PodLinkTests.handshake(hub)
        #expect(hub.request(.startStream(.all))?.0.status == .ok)
        var blocks: [PiezoBlock] = []
        _ = hub.wait { f in
            if let p = f.piezo { blocks.append(p) }
            return blocks.count == 20
        }
        #expect(blocks.count == 20, "ticks \(blocks.map(\.firstTick)) samples0 \(blocks.map { $0.samples[0] }) sent \(pod.snapshot.framesSent) dropped \(pod.snapshot.transmitDropped) hung \(hub.hungUp) \(hub.decoder.counters)")
        #expect(blocks.enumerated().allSatisfy { k, b in b.samples == (0..<100).map { Int32(k * 1000 + $0) } })
        #expect(zip(blocks, blocks.dropFirst()).allSatisfy { $1.firstTick == $0.firstTick + 50 })
        // The recording's one lost frame shows as one lost frame here too.
        #expect(hub.decoder.counters.sequenceGaps == 1 && hub.decoder.counters.droppedFrames == 1)
        await pod.waitUntilFinished()
        #expect(pod.snapshot.finished)
    }

    @Test func truthTimesFollowTheClockTheHubSet() {
        let anchor = ClockAnchor(tick: 1000, unixMillis: 1_767_225_600_000, utcOffsetMinutes: 60)
        let clock = TruthClock(clocks: [AppliedClock(anchor: anchor, bootCount: 1, modelTick: 1000),
                                        AppliedClock(anchor: ClockAnchor(tick: 0, unixMillis: 1_767_230_000_000, utcOffsetMinutes: 60),
                                                     bootCount: 2, modelTick: 2_000_000)],
                               nightStartUnix: 5)
        #expect(clock.unixTime(simulatedSeconds: 2) == 1_767_225_600)
        #expect(clock.unixTime(simulatedSeconds: 0) == 1_767_225_598)
        #expect(clock.unixTime(simulatedSeconds: 4001) == 1_767_230_001)
        #expect(TruthClock(clocks: [], nightStartUnix: 100).unixTime(simulatedSeconds: 7) == 107)
        #expect(TruthFiles.fixed(-1.005, 2) == "-1.01" || TruthFiles.fixed(-1.005, 2) == "-1.00")
        #expect(TruthFiles.fixed(1_767_225_600.25, 3) == "1767225600.250")
    }

    @Test func writesTheTruthItPlayedInTheHubsTime() throws {
        let night = NightConfig(seed: 5, duration: 3600, sides: [SideConfig(sleeper: SleeperProfile(getsIn: 0)), .empty],
                                pumpVibration: false)
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(night: night, speed: 200, nightStartUnix: 1_700_000_000))
        let path = try pod.start()
        let hub = try HubLink(path: path)
        let (_, anchor) = try PodLinkTests.handshake(hub, unixMillis: 1_767_225_600_000)
        while pod.snapshot.simulatedSeconds < 30 { hub.pump(timeout: 0.05) }
        pod.stop()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("vpod-truth-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try pod.writeTruth(to: dir)
        #expect(files.count == 5)
        #expect(try String(contentsOfFile: dir + "/alarms.csv", encoding: .utf8) == "t,side,stage,got_up_t\n", "no alarm was set")
        let snapshot = pod.snapshot
        let applied = try #require(snapshot.appliedClocks.first)
        #expect(applied.anchor == anchor)
        let table = try String(contentsOfFile: dir + "/truth.csv", encoding: .utf8).split(separator: "\n")
        #expect(table.first == "t,side,present,stage,heart_rate,breathing_rate,movement")
        #expect(table.count - 1 == 2 * Int(snapshot.simulatedSeconds))
        // Second 0 happened (applied.modelTick / 500) seconds before the clock was set.
        let expected = Double(anchor.unixMillis) / 1000 - Double(applied.modelTick) / 500
        let firstT = try #require(Double(table[1].split(separator: ",")[0]))
        #expect(abs(firstT - expected) < 0.001)
        let firstLeft = table[1].split(separator: ",", omittingEmptySubsequences: false)
        #expect(firstLeft[1] == "0" && firstLeft[2] == "1")
        let beats = try String(contentsOfFile: dir + "/beats-left.csv", encoding: .utf8).split(separator: "\n")
        #expect(beats.first == "beat_time" && beats.count > 20)
        let truthBeats = try #require(pod.groundTruth?.sides[0].beatTimes)
        let firstBeat = try #require(Double(beats[1]))
        #expect(abs(firstBeat - (expected + truthBeats[0])) < 0.001)
    }

    @Test func faultSpecsParse() throws {
        #expect(try ScheduledFault(spec: "drop:20@10m") == ScheduledFault(.dropFrames(20), at: 600))
        #expect(try ScheduledFault(spec: "reboot@2h") == ScheduledFault(.reboot(.watchdog), at: 7200))
        #expect(try ScheduledFault(spec: "reboot:2") == ScheduledFault(.reboot(.brownOut), at: 0))
        #expect(try ScheduledFault(spec: "disconnect:3@90s") == ScheduledFault(.disconnect(seconds: 3), at: 90))
        #expect(try ScheduledFault(spec: "garbage") == ScheduledFault(.garbage(bytes: 32), at: 0))
        #expect(try ScheduledFault(spec: "clockloss@1.5h") == ScheduledFault(.clockLoss, at: 5400))
        for bad in ["", "melt", "drop:-1", "drop:x", "reboot:9", "stall:2@soon"] {
            #expect(throws: ScheduledFault.ParseError.self) { try ScheduledFault(spec: bad) }
        }
    }

    @Test func scheduledFaultsHappenAtTheirSimulatedTime() throws {
        let night = NightConfig(seed: 2, duration: 3600, sides: [.empty, .empty], pumpVibration: false)
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            night: night, speed: 200, faults: [ScheduledFault(.reboot(.software), at: 20)]))
        let path = try pod.start()
        defer { pod.stop() }
        let hub = try HubLink(path: path)
        _ = try PodLinkTests.handshake(hub)
        let boot = try #require(hub.wait { $0.event?.kind == .boot && $0.event?.argument == ResetReason.software.rawValue })
        #expect(boot.header.sequence == 0)
        #expect(pod.snapshot.bootCount == 2)
        #expect(pod.snapshot.simulatedSeconds >= 20)
    }

    @Test func badConfigurationsAreRefused() {
        #expect(throws: VirtualPodConfiguration.ConfigurationError.self) {
            try VirtualPod(configuration: VirtualPodConfiguration(identity: PodIdentity(serial: "")))
        }
        #expect(throws: VirtualPodConfiguration.ConfigurationError.self) {
            try VirtualPod(configuration: VirtualPodConfiguration(speed: 0))
        }
        #expect(throws: VirtualPodConfiguration.ConfigurationError.self) {
            try VirtualPod(configuration: VirtualPodConfiguration(identity: PodIdentity(sides: 3)))
        }
    }
}
