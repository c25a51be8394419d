import ArgumentParser
import Foundation
import NightModel
import PodProtocol
import VirtualPod
import SleepDomain

/// `podbridge simulate`: run the virtual pod on a pseudo-terminal. Parsing and printing
/// only; the pod is `VirtualPod` in the VirtualPod module (docs/virtual-pod.md).
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run a virtual sleep pod on a pseudo-terminal and print its tty path.",
        discussion: """
        The pod speaks protocol v1.1 (and v1.0 to an older hub) on the printed tty (open it like /dev/ttyACM0) and plays a \
        night from the physiology model, or a recorded capture with --replay. It runs until \
        Ctrl-C or the end of the night. Faults: --fault KIND[:ARG][@TIME], KIND one of garbage \
        (ARG bytes), crc (frames), drop (frames), stall (real seconds), disconnect (real seconds \
        until the replug), reboot (reset reason 0-5), silentreboot (a reboot whose BOOT is lost; \
        reset reason 0-5), clockloss, refusestream (nack status 1-11, or off), answerdelay (real \
        seconds before each response); TIME is simulated time since start (90s, 15m, 2h). \
        Example: --fault drop:20@10m --fault reboot@2h. docs/virtual-pod.md describes each.
        """)

    enum Occupancy: String, ExpressibleByArgument, CaseIterable { case occupied, empty }

    @Option(help: "Seed of the simulated night (same seed, same night).")
    var seed: UInt64 = 1

    @Option(help: "Simulated seconds per real second (60 plays 8 hours in 8 minutes).")
    var speed: Double = 1

    @Option(help: "Left side: occupied or empty.")
    var left: Occupancy = .occupied

    @Option(help: "Right side: occupied or empty.")
    var right: Occupancy = .occupied

    @Option(help: "Sensor noise: low, normal or high.")
    var noise: String = "normal"

    @Flag(help: "The water pump runs in bursts and shakes the bed.")
    var pump = false

    @Option(help: "USB serial number the pod reports (1-32 printable ASCII characters, no spaces; default VPOD0001, or the recorded pod's with --replay).")
    var serial: String?

    @Option(help: "Night start (model time 0): ISO 8601 date-time or local HH:mm today (default 22:30).")
    var start: String?

    @Option(help: "Length of the night in hours.")
    var duration: Double = 8

    @Option(name: .customLong("in-bed"),
            help: "Minutes after the night starts the sleepers get into bed (default 3-10, drawn from the seed; at most 10% of the night).")
    var inBed: Double?

    @Option(name: .customLong("out-of-bed"),
            help: "Minutes before the end of the night the sleepers get up (default 3-10, drawn from the seed; at most 10% of the night).")
    var outOfBed: Double?

    @Option(help: "Write the ground truth played (truth.csv, beats-*.csv, clock.csv, alarms.csv) to this directory at the end.")
    var truth: String?

    @Option(help: "Replay the pod frames of a capture file instead of the model.")
    var replay: String?

    @Option(name: .customLong("fault"), help: "Inject a fault: KIND[:ARG][@TIME] (repeatable).")
    var faults: [String] = []

    @Option(help: "Keep a symlink at this path pointing at the current tty (stable across replugs).")
    var link: String?

    @Option(name: .customLong("transmit-queue"),
            help: "MiB the pod queues while the hub does not read, beyond which it drops frames (counted in tx_dropped; default 1, about 2 minutes of streaming at 1x).")
    var transmitQueue: Double = 1

    func validate() throws {
        guard NoiseLevel(rawValue: noise) != nil else { throw ValidationError("--noise must be low, normal or high") }
        guard speed.isFinite, speed > 0, speed <= 10_000 else { throw ValidationError("--speed must be in (0, 10000]") }
        guard duration.isFinite, duration > 0, duration <= 48 else { throw ValidationError("--duration must be in (0, 48] hours") }
        // The model holds both to 10 % of the night; a larger value is refused, not quietly cut.
        let tenth = duration * 6
        for (name, value) in [("--in-bed", inBed), ("--out-of-bed", outOfBed)] {
            guard let value else { continue }
            guard value.isFinite, value >= 0, value <= tenth else {
                throw ValidationError("\(name) must be 0 … \(String(format: "%g", tenth)) minutes "
                                      + "(at most 10% of the \(String(format: "%g", duration)) h night), got \(String(format: "%g", value))")
            }
        }
        guard transmitQueue.isFinite, transmitQueue >= 1.0 / 256, transmitQueue <= 1024 else {
            throw ValidationError("--transmit-queue must be in [1/256, 1024] MiB")
        }
        if let serial, !PodIdentity.isValidSerial(serial) { throw ValidationError("--serial must be 1-32 printable ASCII characters, no spaces") }
        if let start, Self.parseStart(start) == nil {
            throw ValidationError("--start must be ISO 8601 (2026-01-04T22:30:00+01:00) or HH:mm")
        }
        for f in faults {
            do { _ = try ScheduledFault(spec: f) } catch { throw ValidationError(error.description) }
        }
    }

    /// ISO 8601 date-time, or HH:mm today in the local time zone.
    static func parseStart(_ text: String) -> Date? {
        if let t = TimeOfDay(text) {
            var cal = Calendar(identifier: .gregorian)
            cal.timeZone = .current
            return cal.date(bySettingHour: Int(t.hour), minute: Int(t.minute), second: 0, of: Date())
        }
        let iso = ISO8601DateFormatter()
        return iso.date(from: text)
    }

    func run() async throws {
        var sleeper = SideConfig()
        if let inBed { sleeper.sleeper.getsIn = inBed * 60 }
        if let outOfBed { sleeper.sleeper.getsOutBeforeEnd = outOfBed * 60 }
        let night = NightConfig(seed: seed, duration: duration * 3600,
                                sides: [left == .occupied ? sleeper : .empty, right == .occupied ? sleeper : .empty],
                                noise: NoiseLevel(rawValue: noise) ?? .normal, pumpVibration: pump)
        let startDate = start.flatMap(Self.parseStart) ?? Self.parseStart("22:30")!
        // Made now: a path that cannot take the truth fails before the night is played, not after.
        if let truth, replay == nil { try OutputFile.prepareDirectory(truth, option: "--truth") }
        var records: [Capture.Record]?
        if let replay {
            let bytes: [UInt8]
            do { bytes = Array(try InputFile.bytes(replay)) } catch {
                throw CommandFailure("--replay \(error)")
            }
            do {
                let read = try Capture.read(bytes)
                if read.truncatedTail { say("note: \(replay) ends with a record cut short; replaying the rest") }
                records = read.records
            } catch {
                throw CommandFailure("\(replay): \(error.description)")
            }
        }
        var scheduled: [ScheduledFault] = []
        for f in faults { scheduled.append(try ScheduledFault(spec: f)) }
        var identity = PodIdentity(serial: serial ?? "VPOD0001")
        if let records, let info = CaptureReplay(records: records).recordedInfo {
            // A replay looks like the pod that was recorded, unless told otherwise.
            identity = PodIdentity(serial: serial ?? info.serial, firmware: info.firmware,
                                   sides: Int(min(max(info.sides, 1), 2)),
                                   channelsPerSide: Int(min(max(info.piezoChannelsPerSide, 1), 2)))
        }
        let attaches = AttachCounter()
        let config = VirtualPodConfiguration(
            identity: identity, night: night, speed: speed,
            nightStartUnix: startDate.timeIntervalSince1970, replay: records, faults: scheduled, linkPath: link,
            transmitQueueLimit: Int(transmitQueue * 1_048_576),
            onAttach: { path in
                if attaches.next() > 1 { say("replugged: \(path)") }
            })
        let pod = try VirtualPod(configuration: config)
        let path = try pod.start()
        say("virtual pod \(identity.serial) on \(path)" + (link.map { " (link \($0))" } ?? ""))
        say(records == nil
              ? "playing \(duration) h from \(ISO8601DateFormatter().string(from: startDate)) at \(speed)x, seed \(seed); Ctrl-C to stop"
              : "replaying \(records!.count) recorded frames at \(speed)x; Ctrl-C to stop")

        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { pod.stop() }
            source.resume()
            sources.append(source)
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(10))
                if Task.isCancelled { break }
                say(Self.statusLine(pod.snapshot))
            }
        }
        await pod.waitUntilFinished()
        ticker.cancel()
        pod.stop()
        sources.forEach { $0.cancel() }
        let s = pod.snapshot
        say(Self.statusLine(s))
        if let truth, records == nil {
            do {
                let files = try pod.writeTruth(to: truth)
                say("ground truth: " + files.joined(separator: ", "))
            } catch {
                throw CommandFailure(error.description)
            }
        }
    }

    static func statusLine(_ s: VirtualPodSnapshot) -> String {
        let t = Int(s.simulatedSeconds)
        let hms = String(format: "%02d:%02d:%02d", t / 3600, t / 60 % 60, t % 60)
        return "sim \(hms)  boot \(s.bootCount)  hub \(s.linkReady ? "ready" : "waiting")"
            + "  clock \(s.clock == nil ? "unset" : "set")  frames \(s.framesSent)  tx-dropped \(s.transmitDropped)"
            + "  requests \(s.requestsAnswered)  alarms \(s.alarmsFired.count)"
    }
}

/// Counts tty attachments from the pod's thread (first attach vs replugs).
private final class AttachCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}
