// A minimal pod peer for connection tests: the firmware side of the protocol over a real
// pty, with knobs for the faults the tests need. (The full simulator is VirtualPod.)
import Foundation
import PodProtocol
@testable import PodDevice
import SleepDomain

actor ScriptedPod {
    /// The pod's end of the link (a pty master) and the tty path the hub opens.
    let pty: any Transport
    nonisolated let path: String
    let serial: String
    var protocolVersion: UInt8
    var bootCount: UInt32
    private var encoder = FrameEncoder()
    private let decoder = FrameDecoder()
    /// Every request the hub sent, in order.
    private(set) var requests: [DecodedFrame] = []
    /// Requests of a type to leave unanswered (count down per frame, retransmits included).
    var ignore: [MessageType: Int] = [:]
    /// Requests of a type to refuse with a status.
    var refuse: [MessageType: Status] = [:]
    /// Send a BOOT event just before answering HELLO (a pod that reset as the hub connected).
    var bootBeforeHello = false
    /// The serial HELLO reports (default: `serial`); "" plays a pod with an empty serial.
    var reportedSerial: String?
    /// HELLO feature bits.
    var features: FeatureSet = .all
    /// A HELLO was answered since the last reset; without one, other requests are refused
    /// with `noSessionStatus` (v1.1 NO_SESSION, or NOT_READY for a v1 pod).
    private(set) var sessionOpen = false
    var noSessionStatus: Status = .noSession
    /// The minor this pod speaks (v1.1: 1); nil plays a v1.0 pod, which answers HELLO without
    /// `protocol_minor` whatever the hub offers.
    var speaksMinor: UInt8? = Wire.minorVersion
    /// Sides HELLO announces.
    var sides: UInt8 = 2
    /// Requests of a type refused with a status the next `count` times (then served).
    var refuseTimes: [MessageType: (status: Status, count: Int)] = [:]
    /// Requests of a type whose first answer is held back until its retransmission arrives:
    /// then the held answer and the retransmission's go out, one after the other.
    var withholdUntilRetransmit: Set<MessageType> = []
    private var withheld: [UInt16: Response] = [:]
    /// Requests of a type answered twice at once.
    var answerTwice: Set<MessageType> = []
    /// When each request arrived, and when the pod last sent a frame (liveness scenarios).
    private(set) var arrivals: [ContinuousClock.Instant] = []
    private(set) var lastSentAt = ContinuousClock.now
    /// Remembered answers by request id (spec §7.2: retransmits get the same answer).
    private var answered: [UInt16: Response] = [:]
    private var reader: Task<Void, Never>?
    private var tick: UInt64 = 0
    /// The minor the last HELLO agreed (nil: a v1.0 answer).
    private var agreedMinor: UInt8?

    init(serial: String = "PB0001", protocolVersion: UInt8 = Wire.version, bootCount: UInt32 = 1) throws {
        let terminal = try PseudoTerminal()
        self.init(link: terminal, path: terminal.path, serial: serial, protocolVersion: protocolVersion, bootCount: bootCount)
    }

    /// A pod behind an existing link end, e.g. the master side of umockdev's mocked tty.
    init(link: any Transport, path: String, serial: String = "PB0001", protocolVersion: UInt8 = Wire.version, bootCount: UInt32 = 1) {
        pty = link
        self.path = path
        self.serial = serial
        self.protocolVersion = protocolVersion
        self.bootCount = bootCount
    }

    func start() {
        reader = Task { await self.readLoop() }
    }

    private func readLoop() async {
        while let bytes = try? await pty.read() {
            for frame in decoder.decode(bytes) { await handle(frame) }
        }
    }

    /// Requests of `type` the hub made, each once: a retry (RETRANSMIT, same id) of a request
    /// the loaded test machine answered late is the same request, not another one.
    func count(of type: MessageType) -> Int {
        requests.filter { $0.header.type == type.rawValue && !$0.header.flags.contains(.retransmit) }.count
    }

    private func handle(_ frame: DecodedFrame) async {
        requests.append(frame)
        arrivals.append(.now)
        guard let type = MessageType(rawValue: frame.header.type) else { return }
        if let left = ignore[type], left > 0 {
            ignore[type] = left - 1
            return
        }
        let id = frame.header.requestID
        if let held = withheld.removeValue(forKey: id) {
            await send(.response(held), requestID: id)  // the original's answer, late
        }
        if let previous = answered[id] {
            await send(.response(previous), requestID: id)
            return
        }
        let response: Response
        if case let (status, count)? = refuseTimes[type], count > 0 {
            refuseTimes[type] = (status, count - 1)
            response = Response(request: type, status: status)
        } else if let status = refuse[type] {
            response = Response(request: type, status: status)
        } else if !sessionOpen, type != .hello {
            response = Response(request: type, status: noSessionStatus)
        } else {
            switch frame.message {
            case .hello(let h):
                if bootBeforeHello {
                    bootBeforeHello = false
                    await reboot()
                }
                agreedMinor = h.maxMinor.flatMap { hub in speaksMinor.map { min(hub, $0) } }
                response = (h.minVersion...h.maxVersion).contains(protocolVersion)
                    ? Response(request: .hello, status: .ok, body: .hello(info))
                    : Response(request: .hello, status: .unsupportedVersion)
                sessionOpen = response.status == .ok
                answered.removeAll()
            case .setClock(let c):
                response = Response(request: .setClock, status: .ok,
                                    body: .clock(ClockAnchor(tick: tick, unixMillis: c.unixMillis, utcOffsetMinutes: c.utcOffsetMinutes)))
            case .ping(let nonce):
                response = Response(request: .ping, status: .ok, body: .pong(nonce))
            case .getStatus:
                response = Response(request: .getStatus, status: .ok, body: .status(PodStatus(
                    tick: tick, clockValid: true, unixMillis: 0, utcOffsetMinutes: 0, uptimeSeconds: 1, bootCount: bootCount,
                    streaming: .all, powerMask: 0, alarmArmedMask: 0, alarmActiveMask: 0, framesDropped: 0)))
            default:
                response = Response(request: type, status: .ok)
            }
        }
        answered[id] = response
        if withholdUntilRetransmit.remove(type) != nil {
            withheld[id] = response
            return
        }
        await send(.response(response), requestID: id)
        if answerTwice.remove(type) != nil { await send(.response(response), requestID: id) }
    }

    var info: PodInfo {
        PodInfo(protocolVersion: protocolVersion, firmware: FirmwareVersion(1, 4, 2), sides: sides, piezoChannelsPerSide: 1,
                sampleRate: 500, capacitanceRateMilliHz: 2000, features: features, bootCount: bootCount, tick: tick,
                serial: reportedSerial ?? serial, protocolMinor: agreedMinor)
    }

    func send(_ message: Message, requestID: UInt16 = 0) async {
        guard let bytes = try? encoder.encode(message, requestID: requestID) else { return }
        lastSentAt = .now
        try? await pty.write(bytes)
    }

    /// Sends a frame with the given sequence number (reordering scenarios); the pod's own
    /// counter goes on from where it was.
    func send(_ message: Message, sequence: UInt16) async {
        let next = encoder.nextSequence
        encoder.nextSequence = sequence
        await send(message)
        encoder.nextSequence = next
    }

    /// The sequence number of the pod's next frame.
    var nextSequence: UInt16 { encoder.nextSequence }

    /// Raw link bytes, counted as one sent frame (hand-stuffed frames).
    func sendRaw(_ bytes: [UInt8]) async {
        encoder.nextSequence &+= 1
        lastSentAt = .now
        try? await pty.write(bytes)
    }

    /// The boot count moves on while a session stays open: what a hub sees when another host's
    /// HELLO reached the pod after a reset it did not hear of.
    func bumpBootCountKeepingSession() { bootCount += 1 }

    func configure(_ change: @Sendable (isolated ScriptedPod) -> Void) { change(self) }

    /// A piezo block for `side`, advancing the pod's ticks.
    func sendPiezo(side: BedSide = .left) async {
        let samples = (0..<50).map { Int32($0 * 1000) }
        await send(.piezo(PiezoBlock(side: side, channels: 1, gain: 1, firstTick: tick, samples: samples)))
        tick += 50
    }

    /// Bytes that are no frame at all.
    func sendGarbage(_ bytes: [UInt8]) async { try? await pty.write(bytes) }

    /// A frame whose CRC no longer matches (one payload byte flipped before stuffing).
    func sendCorruptPiezo() async {
        guard let good = try? encoder.encode(.piezo(PiezoBlock(side: .left, channels: 1, gain: 1, firstTick: tick, samples: [1, 2, 3]))),
              var frame = COBS.decode(Array(good.dropLast())) else { return }
        frame[Wire.headerSize + 2] ^= 0x40
        if frame[Wire.headerSize + 2] == 0 { frame[Wire.headerSize + 2] = 0x41 }
        try? await pty.write(COBS.encode(frame) + [0])
        tick += 3
    }

    /// Skips `n` sequence numbers, as if those frames were lost on the way.
    func loseFrames(_ n: UInt16) { encoder.nextSequence &+= n }

    /// A reset: sequence and ticks restart, BOOT goes out first, remembered answers are gone.
    func reboot() async {
        rebootSilently()
        await send(.event(PodEvent(tick: 0, kind: .boot, side: nil, argument: 1)))
    }

    /// A reset whose BOOT frame is lost on the wire: the hub hears nothing.
    func rebootSilently() {
        encoder = FrameEncoder()
        encoder.nextSequence = 1  // BOOT took sequence 0 and never arrived
        tick = 0
        bootCount += 1
        sessionOpen = false
        answered.removeAll()
    }

    func set(reportedSerial: String?) { self.reportedSerial = reportedSerial }
    func set(features: FeatureSet) { self.features = features }
    func set(noSessionStatus: Status) { self.noSessionStatus = noSessionStatus }

    /// Unplug: the hub's tty sees end of file.
    func unplug() {
        reader?.cancel()
        pty.close()
    }
}
