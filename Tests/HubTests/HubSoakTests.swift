// The link soak of issue 10: the real `podbridge run` binary follows a virtual pod for eight
// nights in a row at high speed, each night with random faults (garbage, CRC errors, drops,
// stalls, unplug/replug, reboots with and without a lost BOOT). Every night must be stored,
// the daemon's memory must not grow from night to night, and no request may be re-sent after
// its answer arrived (read from the daemon's own capture of the wire).
import TestSupport
import Foundation
import Hub
import NightModel
import PodProtocol
import SleepDomain
import SleepStore
import SystemCalls
import Testing
import VirtualPod

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct HubSoakTests {
    static let nights = 8
    static let speed = 300.0
    /// 90 simulated minutes a night (18 s real): the sleeper gets in after 2 minutes and out 12
    /// minutes before the pod stops, so the night closes (5-minute gap) before the next begins.
    static let nightSeconds = 90.0 * 60

    /// One of each fault that loses or delays data, and a reboot of each kind, at random
    /// moments between 10 % and 60 % of the night, while the sleeper is in bed. The rest shows
    /// the recovery: a lost BOOT costs the 3-s liveness timeout, 15 simulated minutes at 300×,
    /// and the night can only close once the hub has seen the sleeper leave.
    static func faults(night: Int) -> [ScheduledFault] {
        var random = SplitMix64(seed: UInt64(night) &* 7919)
        let kinds: [Fault] = [.garbage(bytes: 48), .badCRC(frames: 2), .dropFrames(3), .stall(seconds: 0.3),
                              .disconnect(seconds: 0.4), .reboot(.watchdog), .silentReboot(.brownOut)]
        return kinds.map { fault in
            ScheduledFault(fault, at: nightSeconds * (0.1 + 0.5 * Double(random.next() % 1000) / 1000))
        }
    }

    @Test("eight nights with faults: every night stored, memory flat, no retransmit after an answer")
    func eightNights() async throws {
        let binary = try #require(HubDaemonTests.podbridgeURL(), "podbridge must be built beside the tests")
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let link = dir.path("pod")
        let state = dir.path("state")
        let capture = dir.path("wire.podcap")
        // A short reconnect backoff: each night is a new pod on the same link, like a replug.
        let config = dir.path("config.json")
        try #"{"pod": {"reconnectMaxSeconds": 1}, "sessions": {"maxGapMinutes": 5}}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["run", "--config", config, "--path", link, "--state-dir", state, "--tz", "UTC",
                             "--log-level", "info", "--listen", "127.0.0.1:0", "--record", capture,
                             "--clock-speed", "\(Self.speed)", "--clock-start", "2026-11-16T22:00:00Z",
                             "--clock-timeline", dir.path("timeline")]
        // The nights' pods and the daemon share paced time: a daemon starved by other suites
        // slows the nights instead of losing them.
        let timeline = try PacedTimeline(publishingAt: dir.path("timeline"))
        let logPath = dir.path("daemon.log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try #require(FileHandle(forWritingAtPath: logPath))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        func said() -> String { String((try? String(contentsOfFile: logPath, encoding: .utf8))?.suffix(3000) ?? "") }
        let database = (state as NSString).appendingPathComponent("podbridge.sqlite")
        let utc = try #require(TimeZone(identifier: "UTC"))

        var residentKiB: [Int] = []
        for night in 1...Self.nights {
            let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 120, getsOutBeforeEnd: 12 * 60, bathroomTrip: false))
            let pod = try VirtualPod(configuration: VirtualPodConfiguration(
                identity: PodIdentity(serial: "SOAK0001", channelsPerSide: 1),
                night: NightConfig(seed: UInt64(100 + night), duration: Self.nightSeconds, sides: [sleeper, .empty],
                                   noise: .normal, pumpVibration: false, channelsPerSide: 1),
                speed: Self.speed, faults: Self.faults(night: night), linkPath: link, timeline: timeline))
            try pod.start()
            await pod.waitUntilFinished()
            let ended = pod.snapshot
            pod.stop()
            // Both reboots were recovered from, the silent one included: the pod ended the
            // night on its third boot with the hub's clock.
            #expect(ended.bootCount == 3, "night \(night): boot \(ended.bootCount)")
            #expect(ended.clock != nil, "night \(night): the pod ended the night without a clock")

            let stored = await eventually(120) {
                guard FileManager.default.fileExists(atPath: database),
                      let store = try? NightStore(path: database, timeZone: utc),
                      let sessions = try? await store.allSessions(side: .left) else { return false }
                return sessions.filter(\.isFinal).count >= night
            }
            #expect(stored, "night \(night) was not stored; the daemon said: \(said())")
            residentKiB.append(Self.residentKiB(of: process.processIdentifier) ?? 0)
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the daemon said: \(said())")

        // One final session per night for the sleeper, none for the empty side.
        let store = try NightStore(path: database, timeZone: utc)
        let left = try await store.allSessions(side: .left)
        #expect(left.count == Self.nights && left.allSatisfy(\.isFinal), "\(left.map { ($0.start, $0.end, $0.isFinal) })")
        #expect(left.allSatisfy { $0.metrics.timeInBedMinutes > 40 }, "\(left.map(\.metrics.timeInBedMinutes))")
        #expect(try await store.allSessions(side: .right).isEmpty)

        // Memory flat: what the daemon holds after the eighth night is what it held after the
        // first, within the allocator's slack (a night's leak would be megabytes).
        let first = Double(residentKiB.first ?? 0) / 1024, last = Double(residentKiB.last ?? 0) / 1024
        print(String(format: "hub soak: daemon resident memory %.1f MiB after night 1, %.1f MiB after night %d (%@)",
                     first, last, Self.nights, residentKiB.map { String($0 / 1024) }.joined(separator: ", ")))
        #expect(first > 0 && last < first + 16, "resident MiB per night: \(residentKiB.map { $0 / 1024 })")

        // No spurious retransmit: a request re-sent (RETRANSMIT flag) after the pod's answer
        // to it was already on the hub's side of the wire.
        let wire = try WireReport(capture: [UInt8](Data(contentsOf: URL(fileURLWithPath: capture))))
        #expect(wire.spuriousRetransmits.isEmpty, "re-sent after their answer: \(wire.spuriousRetransmits.prefix(10))")
        #expect(wire.requests > 8 * 5, "the capture holds \(wire.requests) requests")
        print("hub soak: \(wire.requests) requests, \(wire.retransmits) retransmits, none after an answer")
    }

    @Test("the wire check finds a request re-sent after its answer, and not one re-sent before it")
    func wireCheckFindsASpuriousRetransmit() throws {
        func record(_ direction: Capture.Direction, _ message: Message, id: UInt16, _ flags: FrameFlags = []) throws -> [UInt8] {
            var encoder = FrameEncoder()
            let stuffed = try encoder.encode(message, requestID: id, flags: flags)
            let frame = try #require(COBS.decode(Array(stuffed.dropLast())))  // without the 0x00 delimiter
            return Capture.encode(Capture.Record(receivedMicros: 0, direction: direction, frame: frame))
        }
        let answer = Message.response(Response(request: .setClock, status: .badValue))
        let bytes = Capture.magic
            + (try record(.hubToPod, .getStatus, id: 7)) + (try record(.hubToPod, .getStatus, id: 7, .retransmit))  // lost: fine
            + (try record(.podToHub, answer, id: 7))
            + (try record(.hubToPod, .stopStream, id: 8)) + (try record(.podToHub, answer, id: 8))
            + (try record(.hubToPod, .stopStream, id: 8, .retransmit))  // after its answer: spurious
        let report = try WireReport(capture: bytes)
        #expect(report.requests == 2 && report.retransmits == 2)
        #expect(report.spuriousRetransmits.count == 1 && report.spuriousRetransmits.first?.hasSuffix("#8") == true,
                "\(report.spuriousRetransmits)")
    }

    /// VmRSS from /proc: what the process holds in memory now.
    static func residentKiB(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
}

/// The requests in a capture and the ones re-sent although their answer had been received.
struct WireReport {
    var requests = 0
    var retransmits = 0
    /// "TYPE#id" of each retransmit whose answer was recorded before it.
    var spuriousRetransmits: [String] = []

    init(capture bytes: [UInt8]) throws {
        var answered: [UInt16: Bool] = [:]
        var report = self
        _ = try Capture.forEachRecord(in: bytes) { _, direction, frame in
            guard case .success(let decoded) = FrameDecoder.parse(frame: frame) else { return }
            let header = decoded.header
            switch (direction, decoded.message) {
            case (.hubToPod, _):
                guard header.flags.contains(.retransmit) else {
                    report.requests += 1
                    answered[header.requestID] = false
                    return
                }
                report.retransmits += 1
                if answered[header.requestID] == true {
                    report.spuriousRetransmits.append("\(decoded.message)#\(header.requestID)".prefix(60).description)
                }
            case (.podToHub, .response):
                answered[header.requestID] = true
            default:
                break
            }
        }
        self = report
    }
}
