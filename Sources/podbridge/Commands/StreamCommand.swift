import ArgumentParser
import Foundation
import PodAnalysis
import PodDevice
import PodProtocol
import SleepAnalysis
import SleepDomain

/// `podbridge stream`: connect to one pod and print its live readings per side until
/// Ctrl-C, riding through unplug/replug of the same serial.
struct StreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "Connect to a pod and print live readings per side (Ctrl-C to stop).",
        discussion: "Without --path the pod is found with libudev (and re-found by its serial after an unplug). --record writes a capture (firmware-protocol.md §9).")

    @Option(help: "The pod's tty (e.g. /dev/ttyACM0 or a virtual pod's pty) instead of discovery.")
    var path: String?

    @Option(help: "Only this pod (USB serial); default: the first one found, then only that one.")
    var serial: String?

    @Option(help: "Write every frame, both directions, with receive times to this capture file.")
    var record: String?

    @Option(name: .customLong("usb-id"), help: "The pod's USB vendor:product id, in hex.")
    var usbID: String = PodMatch.default.description

    @Flag(name: .customLong("prefer-usb"), help: "Use the vendor bulk interface (libusb) when a pod offers both links.")
    var preferUSB = false

    @Option(help: "Seconds between printed readings.")
    var interval: Double = 1

    func validate() throws {
        _ = try PodMatch.option(usbID)
        guard interval > 0 else { throw ValidationError("--interval must be positive") }
        // A serial no pod can have would be waited for for ever.
        if let serial, !PodSerial.isValid(serial) {
            throw ValidationError("--serial '\(serial)' is not a pod serial (1–\(PodSerial.maxLength) printable ASCII characters, no spaces)")
        }
    }

    func run() async throws {
        let match = try PodMatch.option(usbID)
        var discovery: PodDiscovery?
        let opener: any PodOpener
        if let path {
            // A path not there yet is waited for (a pod being plugged in); one that is there
            // but is no terminal device can never become a pod, so it fails now, not by retrying for ever.
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFCHR {  // stat follows the virtual pod's link
                throw CommandFailure("--path \(path) is \(info.st_mode & S_IFMT == S_IFDIR ? "a directory" : "not a terminal device"): "
                                     + "give the pod's tty (/dev/ttyACM0, or the virtual pod's link)")
            }
            opener = PathOpener(path: path)
        } else {
            let d = try PodDiscovery(configuration: DiscoveryConfiguration(match: match))
            discovery = d
            opener = DiscoveredPodOpener(directory: PodDirectory(following: d), key: serial, preferUSB: preferUSB)
        }
        let recorder = try record.map { try CaptureRecorder(path: $0) }
        let connection = PodConnection(opener: opener, expectedSerial: serial, recorder: recorder)
        // Any pod discovery finds: say which USB id it looks for.
        say("waiting for \(opener.description)" + (path == nil && serial == nil ? " (USB id \(match))" : "") + "…")

        let runner = Task { try await connection.run() }
        let interrupts = Task {
            for await _ in InterruptSignals.stream() {
                runner.cancel()
                return
            }
        }
        // Live analysis (heart rate, breathing, movement, presence) through `LiveAnalyzer`:
        // the same router and front ends as the daemon and `analyze --capture`.
        let analyzer = FrontEndLiveAnalyzer()
        let view = StreamView(readings: LiveReadings(analyzer: analyzer), analyzer: analyzer,
                              interval: .milliseconds(Int(interval * 1000)))
        for await event in connection.events {
            await view.handle(event, connection: connection)
        }
        interrupts.cancel()
        discovery?.stop()
        let counters = await connection.counters()
        say(StreamView.countersLine(counters))
        if let recorder {
            if let error = recorder.error { say("capture \(recorder.path) stopped early: \(error)") } else { say("capture written to \(recorder.path)") }
        }
        do {
            try await runner.value
        } catch let error as PodLinkError {
            // A pod the hub cannot use (e.g. a protocol version mismatch): the error alone,
            // not the usage text, which would suggest the command was called wrongly.
            throw CommandFailure(error.description)
        }
    }
}

/// `LiveAnalyzer` over PodAnalysis's `LivePodAnalysis`: piezo and capacitance from the
/// readings, clock anchors and reboots from the link events.
final class FrontEndLiveAnalyzer: LiveAnalyzer {
    private var analysis = LivePodAnalysis()

    func anchor(_ anchor: ClockAnchor) { analysis.anchor(anchor) }
    func podRestarted() { analysis.podRestarted() }
    func consume(_ block: PiezoBlock) { analysis.apply(.piezo(block)) }
    func consume(_ reading: CapacitanceReading) { analysis.apply(.capacitance(reading)) }

    func vitals(for side: BedSide) -> SideVitals {
        guard let v = analysis.vitals(for: side) else { return SideVitals() }
        return SideVitals(present: v.latest.present, heartRate: v.latest.heartRate.value,
                          breathingRate: v.latest.breathingRate.value,
                          movement: v.latest.present ? v.movement : nil)
    }
}

/// Turns link events into terminal lines.
final class StreamView {
    let readings: LiveReadings
    let analyzer: FrontEndLiveAnalyzer?
    let interval: Duration
    private var lastPrint = ContinuousClock.now
    private var streaming = false
    /// The power mask the pod last reported, to say a change (its own schedule's too) once.
    private var powerMask: UInt8?

    init(readings: LiveReadings, analyzer: FrontEndLiveAnalyzer? = nil, interval: Duration) {
        self.readings = readings
        self.analyzer = analyzer
        self.interval = interval
    }

    func handle(_ event: LinkEvent, connection: PodConnection) async {
        switch event {
        case .connecting(let endpoint):
            say("connecting to \(endpoint)")
        case .connected(let info, let endpoint):
            say("connected: pod \(info.serial), firmware \(info.firmware), protocol \(info.protocolDescription), \(info.sides) side(s), \(info.sampleRate) Hz, boot #\(info.bootCount) on \(endpoint)")
        case .clockSet(let anchor):
            analyzer?.anchor(anchor)
            let at = Date(timeIntervalSince1970: Double(anchor.unixMillis) / 1000)
            let offset = anchor.utcOffsetMinutes
            let zone = String(format: "UTC%@%02d:%02d", offset < 0 ? "−" : "+", abs(offset) / 60, abs(offset) % 60)
            say("clock set: pod tick \(anchor.tick) is \(at.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))) "
                + "(pod's local time \(zone))")
        case .streaming:
            streaming = true
        case .frame(let frame, _):
            if case .event(let e) = frame.message, e.kind == .boot { analyzer?.podRestarted() }
            readings.apply(frame.message)
            if case .event(let e) = frame.message { say("event: \(e.kind)\(e.side.map { " \($0)" } ?? "") arg \(e.argument) at tick \(e.tick)") }
            if streaming, ContinuousClock.now - lastPrint >= interval {
                lastPrint = .now
                say(Self.readingsLines(readings))
                say(Self.countersLine(await connection.counters()))
            }
        case .podRebooted(let evidence):
            streaming = false
            say("pod rebooted (\(evidence)): handshake, clock and schedules again")
        case .clockInvalid:
            say("pod lost its clock without a reset (GET_STATUS): its alarms fail until a hub sets it again")
        case .status(let status):
            guard status.powerMask != powerMask else { return }
            powerMask = status.powerMask
            say("power: " + BedSide.allCases.map { "\($0) \(status.powerMask & (1 << UInt8($0.index)) != 0 ? "on" : "off")" }
                .joined(separator: ", "))
        case .refused(let error, let retryIn):
            say("pod refused: \(error); asking again in \(retryIn.components.seconds) s")
        case .disconnected(let reason):
            streaming = false
            say("disconnected: \(reason)")
        case .retrying(let attempt, let delay, let reason):
            let ms = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
            say("retry #\(attempt) in \(ms) ms (\(reason))")
        case .stopped(let error):
            if let error { say("stopped: \(error)") }
        }
    }

    static func readingsLines(_ r: LiveReadings) -> String {
        BedSide.allCases.map { side in
            let s = r.side(side)
            var parts = ["\(side == .left ? "left " : "right"):"]
            if let present = s.vitals.present { parts.append("present \(present ? "yes" : "no ")") }
            parts.append("piezo p-p \(s.piezoPeakToPeak.map(String.init) ?? "-")")
            parts.append("cap \(s.capacitance.isEmpty ? "-" : s.capacitance.map(String.init).joined(separator: "/"))")
            parts.append("bed \(s.bedTemperature.map { format($0, 1) + " °C" } ?? "-")")
            if let hr = s.vitals.heartRate { parts.append("HR \(format(hr, 0)) bpm") }
            if let br = s.vitals.breathingRate { parts.append("BR \(format(br, 1)) /min") }
            if let mv = s.vitals.movement { parts.append("move \(format(mv, 2))") }
            return parts.joined(separator: "  ")
        }.joined(separator: "\n") + "\nroom: \(r.ambientTemperature.map { format($0, 1) + " °C" } ?? "-")  \(r.humidity.map { format($0, 0) + " %RH" } ?? "")"
    }

    static func countersLine(_ c: LinkCounters) -> String {
        "frames \(c.frames)  dropped \(c.droppedFrames) (\(c.sequenceGaps) gaps)  crc errors \(c.crcErrors)  malformed \(c.malformed)  reconnects \(c.reconnects)  timeouts \(c.timeouts)"
    }

    static func format(_ v: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", v) }
}
