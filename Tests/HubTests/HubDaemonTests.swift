import TestSupport
import Foundation
@testable import Hub
import SleepAnalysis
import Logging
import NightModel
import PodDevice
import SleepDomain
import SleepStore
import Synchronization
import SystemCalls
import Testing
import VirtualPod

#if canImport(Glibc)
import Glibc
#endif

/// The daemon end to end against the virtual pod on a real pty, on a simulated clock:
/// a night goes in, sessions come out of the SQLite file.
@Suite(.serialized) struct HubDaemonTests {
    static let nightStart = Date(timeIntervalSince1970: 1_794_866_400)  // 2026-11-16T22:00:00Z

    /// One sleeper on the left, nobody on the right, getting up 12 minutes before the pod stops.
    static func pod(hours: Double, speed: Double, seed: UInt64, timeline: PacedTimeline? = nil) throws -> VirtualPod {
        let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 120, getsOutBeforeEnd: 12 * 60, bathroomTrip: false))
        let night = NightConfig(seed: seed, duration: hours * 3600, sides: [sleeper, .empty], noise: .normal,
                                pumpVibration: true, channelsPerSide: 2)
        return try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: "HUBTEST1"), night: night, speed: speed,
            transmitQueueLimit: VirtualPodConfiguration.clockedTransmitQueue, timeline: timeline))
    }

    /// The virtual pod playing a night on a pty at `speed`, a hub configuration that opens it,
    /// and the hub's clock, on time the two share (`PacedTimeline`).
    static func podAndConfiguration(hours: Double, seed: UInt64, speed: Double, in dir: ScheduleTempDir) throws
        -> (pod: VirtualPod, config: HubConfiguration, clock: HubClock) {
        let timeline = PacedTimeline()
        let pod = try Self.pod(hours: hours, speed: speed, seed: seed, timeline: timeline)
        let tty = try pod.start()
        return (pod, Self.configuration(state: dir.path("state"), podPath: tty),
                HubClock(start: Self.nightStart, speed: speed, timeline: timeline))
    }

    /// A reporter whose lines the test reads.
    static func reporter(_ lines: ReportedLines) -> HubReporter {
        HubReporter(logger: Logger(label: "hub-test") { _ in CapturingLogHandler(sink: lines) }, console: false)
    }

    static func configuration(state: String, podPath: String) -> HubConfiguration {
        var c = HubConfiguration()
        c.stateDirectory = state
        c.timeZone = "UTC"
        c.pod.path = podPath
        c.sessions.maxGapMinutes = 5
        return c
    }

    @Test func aNightInGivesOneSessionForTheOccupiedSideAndNoneForTheEmptyOne() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let speed = 300.0
        let (pod, config, clock) = try Self.podAndConfiguration(hours: 1.5, seed: 21, speed: speed, in: dir)
        defer { pod.stop() }
        let lines = ReportedLines()
        let reporter = Self.reporter(lines)
        let daemon = try await HubDaemon.assemble(configuration: config, clock: clock,
                                                  reporter: reporter)
        // What an API or MQTT client would see: everything on the bus, from before the pod connects.
        let heard = BusRecorder(daemon.bus.subscribe(name: "test", bufferSize: 1 << 20))
        let running = Task { try await daemon.run(stopSignals: nil) }
        await pod.waitUntilFinished()
        let stored = try await eventually(120) { try await daemon.store.allSessions(side: .left).contains { $0.isFinal } }
        running.cancel()
        _ = await running.result
        // The daemon closed its store on the way out; read the file as any other process would.
        let store = try NightStore(path: config.databasePath, timeZone: config.hubTimeZone)
        #expect(stored, "no final session; the hub said: \(lines.all.suffix(20))")
        let left = try await store.allSessions(side: .left)
        #expect(left.count == 1)
        let session = try #require(left.first)
        #expect(session.isFinal)
        let m = session.metrics
        // The sleeper is in bed from 2 min to 12 min before the end of the 90-min night; the
        // hub sees it from the moment it connected (a loaded machine connects later), and
        // the session ends when the sleeper got up, by the pod's clock.
        #expect((20...82).contains(m.timeInBedMinutes), "time in bed \(m.timeInBedMinutes)")
        let truth = try #require(pod.groundTruth?.sides.first)
        let anchor = try #require(pod.clock)
        let gotUp = anchor.unixTime(ofTick: UInt64(try #require(truth.present.lastIndex(of: true)) + 1) * 500)
        #expect(abs(Double(session.end) - gotUp) < 180, "session ends \(session.end), sleeper got up \(gotUp)")
        #expect(m.totalSleepMinutes > 10 && m.totalSleepMinutes <= m.timeInBedMinutes)
        #expect((20...100).contains(m.efficiency), "efficiency \(m.efficiency) %")
        #expect((45...75).contains(m.meanHeartRate ?? 0), "mean HR \(String(describing: m.meanHeartRate))")
        #expect((0...100).contains(m.score))
        let blocks = try await store.blocks(sessionID: session.id)
        #expect(blocks.contains { $0.stage == .inBed })
        // The sleeper got out of bed, which the hub saw: nobody does that asleep, so the last
        // epoch is awake for certain, not by the model's odds.
        #expect(blocks.last?.stage == .awake && blocks.last?.end == session.end, "last blocks \(blocks.suffix(3))")
        let lastEpoch = try await store.epochs(sessionID: session.id).last
        #expect(lastEpoch?.probabilities?.awake == 1, "last epoch \(String(describing: lastEpoch))")
        #expect(try await store.allSessions(side: .right).isEmpty, "the empty side got a session")
        let export = URL(fileURLWithPath: config.exportDirectory).appendingPathComponent("\(session.wakeDate)-left.json")
        #expect(FileManager.default.fileExists(atPath: export.path))

        // The bus told the same story, once each, in order.
        let events = await heard.events()
        #expect(events.first { if case .podConnected(let p, _, _) = $0 { p.serial == "HUBTEST1" } else { false } } != nil)
        let finished = events.compactMap { if case .nightFinished(let n) = $0 { n } else { nil } }
        #expect(finished.count == 1)
        #expect(finished.first?.side == .left && finished.first?.wakeDate == session.wakeDate.description)
        #expect(finished.first?.metrics.score == m.score)
        let inBed = events.compactMap { if case .presence(_, let side, let inBed, _) = $0 { "\(side) \(inBed)" } else { nil } }
        #expect(inBed == ["left true", "left false"], "presence events \(inBed)")
        let liveLeft = events.compactMap { if case .live(_, .left, let s) = $0 { s } else { nil } }
        // One live second per second of data, in order, with readings while the sleeper lies still.
        #expect(liveLeft.count > 600)
        let breaks = zip(liveLeft, liveLeft.dropFirst()).filter { abs($1.time - $0.time - 1) >= 1e-6 }.map { "\($0.time) → \($1.time)" }
        let link = events.compactMap { e -> String? in
            switch e {
            case .podConnected(_, _, let at): "connected \(at.timeIntervalSince1970)"
            case .podDisconnected(_, let reason, let at): "disconnected \(at.timeIntervalSince1970): \(reason)"
            default: nil
            }
        }
        #expect(breaks.isEmpty, "live seconds not consecutive: \(breaks.prefix(10)); link: \(link)")
        #expect(liveLeft.contains { $0.present && $0.heartRate != nil && $0.breathingRate != nil })
        #expect(events.contains { if case .preliminaryStage(_, .left, _, _) = $0 { true } else { false } })
        #expect(events.contains { if case .clockSet("HUBTEST1", _) = $0 { true } else { false } })
        #expect(events.contains { if case .schedulePushed(let p) = $0 { p.outcome == .ack } else { false } })
        #expect(heard.dropped == 0)
        // The state folded from those events: the newest second is the last one published.
        let state = try #require(daemon.bus.state.pods["HUBTEST1"])
        #expect(state.pod.sides == 2 && state.pod.piezoChannelsPerSide == 2)
        #expect(state.live[.left] == liveLeft.last)
    }

    /// The `podbridge` executable built beside the test bundle.
    static func podbridgeURL() -> URL? {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("podbridge")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    @Test func sigtermKeepsTheOpenNightAsAPreliminarySession() async throws {
        let binary = try #require(Self.podbridgeURL(), "podbridge must be built beside the tests")
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let speed = 300.0
        let timeline = try PacedTimeline(publishingAt: dir.path("timeline"))
        let pod = try Self.pod(hours: 4, speed: speed, seed: 22, timeline: timeline)
        let tty = try pod.start()
        defer { pod.stop() }
        let state = dir.path("state")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["run", "--path", tty, "--state-dir", state, "--tz", "UTC", "--log-level", "info",
                             "--clock-speed", "\(speed)", "--clock-start", "2026-11-16T22:00:00Z",
                             "--clock-timeline", dir.path("timeline")]
        // What the daemon prints goes to a file: the test waits on it and shows it on failure.
        let logPath = dir.path("daemon.log")
        try #require(FileManager.default.createFile(atPath: logPath, contents: nil), "could not create \(logPath)")
        let log = try #require(FileHandle(forWritingAtPath: logPath))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        func said() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

        // Touch the database only once the daemon has created it and is streaming.
        #expect(await eventually(120) { said().contains("streaming from pod") }, "the daemon said: \(said())")
        // The daemon stores a preliminary session every 30 minutes of data while someone is in bed.
        let database = (state as NSString).appendingPathComponent("podbridge.sqlite")
        var firstEnd: Int64 = 0
        let started = await eventually(120) {
            guard FileManager.default.fileExists(atPath: database),
                  let store = try? NightStore(path: database, timeZone: TimeZone(identifier: "UTC")!),
                  let s = try? await store.allSessions(side: .left).first else { return false }
            firstEnd = s.end
            return !s.isFinal
        }
        #expect(started, "no preliminary session appeared; the daemon said: \(said())")
        // Let more of the night pass after the last snapshot, then stop the daemon.
        try await Task.sleep(for: .seconds(3))
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "the daemon said: \(said())")

        let store = try NightStore(path: database, timeZone: TimeZone(identifier: "UTC")!)
        #expect(try await store.integrityCheck() == ["ok"])
        let left = try await store.allSessions(side: .left)
        #expect(left.count == 1)
        // Nothing lost: the session reaches past the last snapshot, up to the shutdown.
        #expect((left.first?.end ?? 0) > firstEnd + 60)
        #expect(left.first?.isFinal == false)
        let right = try await store.allSessions(side: .right)
        #expect(right.isEmpty, "right side: \(right.map { ($0.start, $0.end, $0.isFinal) })")
    }

    @Test func aCarriedOnNightShowsTheSideInBedFromTheStart() async throws {
        // What a stopped hub left: an hour of the left side in bed, up to a minute before now.
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let speed = 300.0
        let (pod, config, clock) = try Self.podAndConfiguration(hours: 0.5, seed: 24, speed: speed, in: dir)
        defer { pod.stop() }
        try FileManager.default.createDirectory(atPath: config.stateDirectory, withIntermediateDirectories: true)
        let start = Self.nightStart.timeIntervalSince1970 - 3600
        var before = SessionTracker()
        _ = before.add(FrontEndOutput(seconds: (0..<3540).map {
            SecondVitals(time: start + Double($0), heartRate: .value(56), breathingRate: .value(13), movement: 0,
                         present: true, quality: 1)
        }))
        let seeded = try NightStore(path: config.databasePath, timeZone: config.hubTimeZone)
        try await seeded.keepOpenStay(podSerial: "HUBTEST1", side: .left, lastSecond: Int64(start) + 3539,
                                      data: OpenStayArchive.encode(try #require(before.openStay)))
        try seeded.close()

        let lines = ReportedLines()
        let reporter = Self.reporter(lines)
        let daemon = try await HubDaemon.assemble(configuration: config, clock: clock,
                                                  reporter: reporter)
        let running = Task { try await daemon.run(stopSignals: nil) }
        #expect(await eventually(60) { lines.all.contains { $0.contains("left: carrying on the session open since 21:00") } },
                "the hub said: \(lines.all.suffix(20))")
        // The pod is on the bus before the side is said to be in bed, so the state has both.
        #expect(await eventually(30) { daemon.bus.state.pods["HUBTEST1"]?.inBed[.left] == true },
                "state: \(String(describing: daemon.bus.state.pods["HUBTEST1"]?.inBed))")
        running.cancel()
        _ = await running.result
    }

    @Test func aPodGoneInTheNightEndsTheNightByTheHubsClock() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let speed = 300.0
        let (pod, config, clock) = try Self.podAndConfiguration(hours: 1.5, seed: 25, speed: speed, in: dir)
        defer { pod.stop() }
        let lines = ReportedLines()
        let reporter = Self.reporter(lines)
        let daemon = try await HubDaemon.assemble(configuration: config, clock: clock, reporter: reporter)
        let running = Task { try await daemon.run(stopSignals: nil) }
        defer { running.cancel() }
        // The sleeper is in bed and a preliminary night is stored; then the pod is unplugged for good.
        #expect(await eventually(120) { (try? await daemon.store.allSessions(side: .left).isEmpty) == false },
                "no preliminary session; the hub said: \(lines.all.suffix(20))")
        pod.stop()
        let unplugged = clock.now()
        #expect(await eventually(60) { daemon.bus.state.pods["HUBTEST1"]?.connected == false })
        #expect(daemon.bus.state.pods["HUBTEST1"]?.inBed[.left] == true)

        var endedAt: Date?
        let ended = await eventually(120) {
            guard let sessions = try? await daemon.store.allSessions(side: .left), sessions.contains(where: \.isFinal)
            else { return false }
            endedAt = clock.now()
            return true
        }
        #expect(ended, "the night was never ended; the hub said: \(lines.all.suffix(20))")
        // Not before the data had stopped for longer than a link outage a night is kept across.
        let waited = try #require(endedAt).timeIntervalSince(unplugged)
        #expect(waited > SessionRules.defaultMaxDataGap - 120, "ended \(waited) s after the pod went")
        let left = try await daemon.store.allSessions(side: .left)
        #expect(left.count == 1, "sessions \(left.map { ($0.start, $0.end, $0.isFinal) })")
        let night = try #require(left.first)
        // It ends at the last data, before the pod went; nobody saw the sleeper leave.
        #expect(Double(night.end) <= unplugged.timeIntervalSince1970 + 60
                && Double(night.end) > unplugged.timeIntervalSince1970 - 600,
                "night ends \(night.end), pod unplugged at \(unplugged.timeIntervalSince1970)")
        let last = try await daemon.store.epochs(sessionID: night.id).last
        #expect(last?.probabilities?.awake != 1, "last epoch \(String(describing: last))")
        #expect(daemon.bus.state.pods["HUBTEST1"]?.inBed[.left] == false)
        #expect(await eventually(30) { (try? await daemon.store.keptOpenStays().isEmpty) == true })
        #expect(lines.all.contains { $0.contains("left: no data from pod HUBTEST1 since") })
        #expect(try await daemon.store.allSessions(side: .right).isEmpty)
        running.cancel()
        _ = await running.result
    }

    /// A store that refuses writes when the night ends (a full disk, a file system remounted
    /// read-only): the night is held, the snapshot kept for a restart stays, `/readyz`'s store
    /// check says why, and once the store takes writes again the night is stored as final. It
    /// used to be dropped, with the snapshot, for good.
    @Test func aNightTheStoreRefusesIsHeldAndStoredOnceItCan() async throws {
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let speed = 300.0
        let (pod, config, clock) = try Self.podAndConfiguration(hours: 1.5, seed: 25, speed: speed, in: dir)
        defer { pod.stop() }
        let lines = ReportedLines()
        let daemon = try await HubDaemon.assemble(configuration: config, clock: clock,
                                                  reporter: Self.reporter(lines))
        let running = Task { try await daemon.run(stopSignals: nil) }
        defer { running.cancel() }
        #expect(await eventually(120) { (try? await daemon.store.keptOpenStays().map(\.side)) == [.left] },
                "no snapshot kept; the hub said: \(lines.all.suffix(20))")
        pod.stop()
        #expect(await eventually(60) { daemon.bus.state.pods["HUBTEST1"]?.connected == false })
        try await daemon.store.refuseWrites(true)
        #expect(await eventually(120) { lines.all.contains { $0.contains("left: could not store the session") } },
                "the night was never ended; the hub said: \(lines.all.suffix(20))")
        #expect(lines.all.contains { $0.contains("left: the night since") && $0.contains("is held in memory") })
        #expect(daemon.store.storageFailure?.contains("readonly") == true, "\(String(describing: daemon.store.storageFailure))")
        #expect(try await daemon.store.keptOpenStays().map(\.side) == [.left], "the snapshot for a restart was dropped")
        #expect(try await daemon.store.allSessions(side: .left).allSatisfy { !$0.isFinal })

        try await daemon.store.refuseWrites(false)
        #expect(await eventually(120) { (try? await daemon.store.allSessions(side: .left).contains(where: \.isFinal)) == true },
                "the held night was never stored; the hub said: \(lines.all.suffix(20))")
        #expect(try await daemon.store.allSessions(side: .left).count == 1)
        #expect(await eventually(30) { (try? await daemon.store.keptOpenStays().isEmpty) == true })
        #expect(daemon.store.storageFailure == nil)
        running.cancel()
        _ = await running.result
    }

    @Test func aKeptNightWhosePodNeverCameBackIsEndedByTheHubsClock() async throws {
        // What a stopped hub left: two open stays of a pod that is not plugged in now, the left
        // one's data 4 h old, the right one's 1 h.
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let speed = 300.0
        let config = Self.configuration(state: dir.path("state"), podPath: dir.path("no-pod-here"))
        try FileManager.default.createDirectory(atPath: config.stateDirectory, withIntermediateDirectories: true)
        let seeded = try NightStore(path: config.databasePath, timeZone: config.hubTimeZone)
        // Each kept as the stopped hub did: the data to carry it on, and the night so far as preliminary.
        let keeper = NightKeeper(store: seeded, configuration: config, bus: HubBus(), reporter: Self.reporter(ReportedLines()))
        func keepStay(_ side: BedSide, endingAt end: Double) async throws {
            var tracker = SessionTracker()
            _ = tracker.add(FrontEndOutput(seconds: (0..<5400).map {
                SecondVitals(time: end - 5400 + Double($0), heartRate: .value(56), breathingRate: .value(13), movement: 0,
                             present: true, quality: 1)
            }))
            try await seeded.keepOpenStay(podSerial: "HUBTEST1", side: side, lastSecond: Int64(end) - 1,
                                          data: OpenStayArchive.encode(try #require(tracker.openStay)))
            await keeper.keep(try #require(tracker.flush()), serial: "HUBTEST1", side: side, isFinal: false)
        }
        let now = Self.nightStart.timeIntervalSince1970
        try await keepStay(.left, endingAt: now - 4 * 3600)
        try await keepStay(.right, endingAt: now - 3600)
        #expect(try await seeded.allSessions(side: .left).map(\.isFinal) == [false])
        try seeded.close()

        let lines = ReportedLines()
        let reporter = Self.reporter(lines)
        let clock = HubClock(start: Self.nightStart, speed: speed)
        let daemon = try await HubDaemon.assemble(configuration: config, clock: clock, reporter: reporter)
        let running = Task { try await daemon.run(stopSignals: nil) }
        defer { running.cancel() }
        #expect(await eventually(60) { (try? await daemon.store.allSessions(side: .left).contains(where: \.isFinal)) == true },
                "the left night was never ended; the hub said: \(lines.all.suffix(20))")
        // The preliminary night became the final one, not a second night beside it.
        let left = try await daemon.store.allSessions(side: .left)
        #expect(left.count == 1 && left.first?.end == Int64(now - 4 * 3600) && left.first?.start == Int64(now - 4 * 3600 - 5400))
        #expect(lines.all.contains { $0.contains("left: pod HUBTEST1 has sent nothing since 18:00") })
        // The right one's data are 1 h old: it is kept until they are 3 h old, and then ended.
        #expect(await eventually(30) { (try? await daemon.store.keptOpenStays().map(\.side)) == [.right] })
        #expect(try await daemon.store.allSessions(side: .right).map(\.isFinal) == [false])
        #expect(await eventually(90) { (try? await daemon.store.allSessions(side: .right).map(\.isFinal)) == [true] },
                "the right night was never ended; the hub said: \(lines.all.suffix(20))")
        #expect(clock.now().timeIntervalSince1970 - (now - 3600) > SessionRules.defaultMaxDataGap)
        // (The kept stay is dropped just after its night is stored.)
        #expect(await eventually(30) { (try? await daemon.store.keptOpenStays().isEmpty) == true })
        running.cancel()
        _ = await running.result
    }

    /// The daemon as a process, as systemd runs it, logging to a file.
    final class DaemonProcess {
        let process = Process()
        let logPath: String
        init(binary: URL, tty: String, state: String, speed: Double, clockStart: Date, logPath: String) throws {
            self.logPath = logPath
            process.executableURL = binary
            process.arguments = ["run", "--path", tty, "--state-dir", state, "--tz", "UTC", "--log-level", "info",
                                 "--clock-speed", "\(speed)", "--clock-start", ISO8601DateFormatter().string(from: clockStart)]
            try #require(FileManager.default.createFile(atPath: logPath, contents: nil), "could not create \(logPath)")
            let log = try #require(FileHandle(forWritingAtPath: logPath))
            process.standardOutput = log
            process.standardError = log
            try process.run()
        }
        var said: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
        func stop() {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        deinit { if process.isRunning { process.terminate() } }
    }

    @Test func aHubRestartedInTheNightCarriesTheNightOn() async throws {
        let binary = try #require(Self.podbridgeURL(), "podbridge must be built beside the tests")
        let dir = try ScheduleTempDir()
        defer { dir.cleanup() }
        let speed = 300.0
        // Up 30 min before the pod stops, so the default 20-min gap ends the night in the data.
        let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: 120, getsOutBeforeEnd: 30 * 60, bathroomTrip: false))
        let pod = try VirtualPod(configuration: VirtualPodConfiguration(
            identity: PodIdentity(serial: "HUBTEST1"),
            night: NightConfig(seed: 23, duration: 4 * 3600, sides: [sleeper, .empty], noise: .normal,
                               pumpVibration: true, channelsPerSide: 2),
            speed: speed))
        let tty = try pod.start()
        defer { pod.stop() }
        let state = dir.path("state")
        let database = (state as NSString).appendingPathComponent("podbridge.sqlite")
        let utc = TimeZone(identifier: "UTC")!

        let first = try DaemonProcess(binary: binary, tty: tty, state: state, speed: speed, clockStart: Self.nightStart,
                                      logPath: dir.path("first.log"))
        #expect(await eventually(120) { first.said.contains("streaming from pod") }, "the daemon said: \(first.said)")
        var preliminary: StoredSession?
        #expect(await eventually(120) {
            guard FileManager.default.fileExists(atPath: database),
                  let store = try? NightStore(path: database, timeZone: utc),
                  let s = try? await store.allSessions(side: .left).first else { return false }
            preliminary = s
            return true
        }, "no preliminary session appeared; the daemon said: \(first.said)")
        try await Task.sleep(for: .seconds(2))
        first.stop()
        #expect(first.process.terminationStatus == 0, "the daemon said: \(first.said)")
        #expect(first.said.contains("to be carried on when the hub starts again"), "the daemon said: \(first.said)")
        let kept = try NightStore(path: database, timeZone: utc)
        #expect(try await kept.openStay(podSerial: "HUBTEST1", side: .left) != nil)
        #expect(try await kept.openStay(podSerial: "HUBTEST1", side: .right) == nil)
        // The first hub's last data: the end of what it kept as preliminary.
        let firstDataEnd = try #require(try await kept.allSessions(side: .left).first).end
        try kept.close()

        // Started again on the clock the pod's night has reached (a real hub's clock simply
        // went on), a little ahead so no second is read twice. Read from the pod's own tick:
        // on a loaded machine the pod's night runs behind 300× of the wall clock.
        let firstAnchor = try #require(pod.clock)
        let restartAt = Date(timeIntervalSince1970: firstAnchor.unixTime(ofTick: pod.snapshot.tick) + 120)
        let second = try DaemonProcess(binary: binary, tty: tty, state: state, speed: speed, clockStart: restartAt,
                                       logPath: dir.path("second.log"))
        #expect(await eventually(120) { second.said.contains("carrying on the session open since 22:0") },
                "the daemon said: \(second.said)")
        #expect(await eventually(120) { second.said.contains("streaming from pod") }, "the daemon said: \(second.said)")
        // The hole the restart leaves in the data, measured, not assumed: from the first hub's last
        // data to the pod's time now by the clock the second hub set (at most where its data starts).
        // On a loaded machine a restart takes longer, and each real second at 300× is 5 minutes.
        let secondAnchor = try #require(pod.clock)
        let holeMinutes = (secondAnchor.unixTime(ofTick: pod.snapshot.tick) - Double(firstDataEnd)) / 60
        let ended = await eventually(180) {
            guard let store = try? NightStore(path: database, timeZone: utc),
                  let sessions = try? await store.allSessions(side: .left) else { return false }
            return sessions.contains { $0.isFinal }
        }
        second.stop()
        #expect(ended, "no final session; the daemon said: \(second.said.suffix(3000))")

        let store = try NightStore(path: database, timeZone: utc)
        let left = try await store.allSessions(side: .left)
        // One night, from the first hub's start of it to the sleeper getting up.
        #expect(left.count == 1, "sessions \(left.map { ($0.start, $0.end, $0.isFinal) })")
        let night = try #require(left.first)
        #expect(night.isFinal && night.start == preliminary?.start)
        let truth = try #require(pod.groundTruth?.sides.first)
        let anchor = try #require(pod.clock)
        let gotUp = anchor.unixTime(ofTick: UInt64(try #require(truth.present.lastIndex(of: true)) + 1) * 500)
        #expect(abs(Double(night.end) - gotUp) < 180, "night ends \(night.end), sleeper got up \(gotUp)")
        // The restart is a short hole in the data, neither sleep nor waking, and no trip out of bed.
        let m = night.metrics
        let unmeasured = m.timeInBedMinutes - (m.awakeMinutes + m.coreMinutes + m.deepMinutes + m.remMinutes)
        #expect(unmeasured >= 1, "minutes without data \(unmeasured)")
        // The hole lies where the first hub's data ended, and is the restart's hole in the data, no
        // longer (an epoch of slack at each edge). Measured on the epochs around it: on a loaded
        // machine the 300× pod can also outrun the hub elsewhere in the night.
        let epochs = try await store.epochs(sessionID: night.id)
        let before = try #require(epochs.last { $0.start < firstDataEnd })
        let after = try #require(epochs.first { $0.start >= firstDataEnd })
        let unstaged = Double(after.start - (before.start + EpochRecord.duration))
        #expect(unstaged >= 60 && unstaged <= holeMinutes * 60 + 60,
                "epochs stop at \(before.start) and start again at \(after.start); hole in the data \(holeMinutes) min")
        let certain = epochs.filter { abs($0.start - after.start) <= 300 && $0.probabilities?.awake == 1 }
        #expect(certain.isEmpty, "awake for certain around the restart: \(certain.map(\.start))")
        #expect(try await store.openStay(podSerial: "HUBTEST1", side: .left) == nil)
        let right = try await store.allSessions(side: .right)
        #expect(right.isEmpty, "right side: \(right.map { ($0.start, $0.end, $0.isFinal) })")
    }
}

/// Collects a bus subscription's events on a task of its own (as the API's streams will).
final class BusRecorder: Sendable {
    private let subscription: HubSubscription
    private let collected = Mutex<[HubEvent]>([])
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ subscription: HubSubscription) {
        self.subscription = subscription
        let t = Task { [self] in
            for await event in subscription { self.collected.withLock { $0.append(event) } }
        }
        task.withLock { $0 = t }
    }

    var dropped: Int { subscription.dropped }

    /// Everything received; ends the subscription and waits for the buffered rest.
    func events() async -> [HubEvent] {
        subscription.finish()
        await task.withLock { $0 }?.value
        return collected.withLock { $0 }
    }

    /// What has arrived so far (the subscription goes on).
    var soFar: [HubEvent] { collected.withLock { $0 } }
}
