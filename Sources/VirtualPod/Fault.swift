import PodProtocol

/// A fault the virtual pod can inject, so the hub's error paths are exercised on demand.
public enum Fault: Sendable, Hashable, CustomStringConvertible {
    /// This many random non-zero bytes and a 0x00 delimiter, between two frames: the
    /// receiver counts one bad frame (malformed, CRC error or oversize) and loses nothing.
    case garbage(bytes: Int)
    /// The next frames go out with a damaged CRC: counted as CRC errors (and a sequence gap).
    case badCRC(frames: Int)
    /// The next frames are never sent (their sequence numbers are used): a sequence gap.
    case dropFrames(Int)
    /// The pod neither reads nor writes for this many real seconds; what it would have sent
    /// meanwhile is lost (counted in its `tx_dropped`), requests wait in the tty buffer.
    case stall(seconds: Double)
    /// The "cable" is pulled: the pty closes (the hub reads EOF/EIO) and after this many real
    /// seconds a new pty appears with the same serial. The pod keeps running meanwhile.
    case disconnect(seconds: Double)
    /// A reset: BOOT event with sequence 0, ticks from 0, clock invalid, schedules, alarms
    /// and streaming cleared, HELLO needed again.
    case reboot(ResetReason)
    /// The clock stops being valid without a reset (a crystal or RTC fault): schedules stay,
    /// an alarm due now fails with ALARM_FAILED (2) instead of ringing at a guessed time.
    case clockLoss
    /// A reset whose BOOT frame is lost on the wire: the pod forgets everything and waits
    /// for HELLO in silence; only the hub's liveness probe can find it (§7.7).
    case silentReboot(ResetReason)
    /// START_STREAM is answered with this final status from now on (nil: accepted again).
    case refuseStream(Status?)
    /// Every response leaves this many real seconds after its request arrived (0 = at once):
    /// set it to the hub's response timeout to make answers race the retransmit timer.
    case answerDelay(seconds: Double)

    public var description: String {
        switch self {
        case .garbage(let n): "garbage:\(n)"
        case .badCRC(let n): "crc:\(n)"
        case .dropFrames(let n): "drop:\(n)"
        case .stall(let s): "stall:\(s)"
        case .disconnect(let s): "disconnect:\(s)"
        case .reboot(let r): "reboot:\(r.rawValue)"
        case .clockLoss: "clockloss"
        case .silentReboot(let r): "silentreboot:\(r.rawValue)"
        case .refuseStream(let s): "refusestream:\(s.map { String($0.rawValue) } ?? "off")"
        case .answerDelay(let s): "answerdelay:\(s)"
        }
    }
}

/// A fault set to happen at a moment of the simulated night.
public struct ScheduledFault: Sendable, Hashable, CustomStringConvertible {
    public var fault: Fault
    /// Simulated seconds since the virtual pod started (model time, not wall time).
    public var at: Double

    public init(_ fault: Fault, at: Double) {
        self.fault = fault
        self.at = at
    }

    public var description: String { "\(fault)@\(at)s" }

    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var spec: String
        public var reason: String
        public var description: String { "bad fault '\(spec)': \(reason)" }
    }

    /// Parses `KIND[:ARG][@TIME]`: KIND is garbage, crc, drop, stall, disconnect, reboot,
    /// silentreboot, clockloss, refusestream or answerdelay; ARG a count of bytes/frames, real
    /// seconds, a reset reason (0–5), or a status code (1–255, `off` lifts the refusal);
    /// TIME simulated time since start with an optional unit s, m or h (default 0 = at once).
    /// Examples: `drop:20@10m`, `reboot@2h`, `disconnect:3@90s`, `garbage:64`.
    public init(spec: String) throws(ParseError) {
        let parts = spec.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let head = parts[0].split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let kind = head[0].lowercased()
        let arg = head.count > 1 ? String(head[1]) : nil
        func fail(_ reason: String) -> ParseError { ParseError(spec: spec, reason: reason) }
        func count(_ d: Int) throws(ParseError) -> Int {
            guard let arg else { return d }
            guard let n = Int(arg), n > 0, n <= 1_000_000 else { throw fail("'\(arg)' is not a positive count") }
            return n
        }
        func seconds(_ d: Double) throws(ParseError) -> Double {
            guard let arg else { return d }
            guard let s = Double(arg), s >= 0, s <= 86_400 else { throw fail("'\(arg)' is not a number of seconds") }
            return s
        }
        switch kind {
        case "garbage": fault = .garbage(bytes: try count(32))
        case "crc": fault = .badCRC(frames: try count(1))
        case "drop": fault = .dropFrames(try count(1))
        case "stall": fault = .stall(seconds: try seconds(2))
        case "disconnect": fault = .disconnect(seconds: try seconds(2))
        case "reboot", "silentreboot":
            let code = try arg.map { a throws(ParseError) -> UInt16 in
                guard let c = UInt16(a), let _ = ResetReason(rawValue: c) else { throw fail("reset reason must be 0–5") }
                return c
            } ?? ResetReason.watchdog.rawValue
            let reason = ResetReason(rawValue: code)!
            fault = kind == "reboot" ? .reboot(reason) : .silentReboot(reason)
        case "clockloss": fault = .clockLoss
        case "refusestream":
            if arg == "off" {
                fault = .refuseStream(nil)
            } else {
                guard let code = UInt8(arg ?? "7"), code > 0, let status = Status(rawValue: code) else {
                    throw fail("status must be a known nack code (1–11) or off")
                }
                fault = .refuseStream(status)
            }
        case "answerdelay": fault = .answerDelay(seconds: try seconds(0.5))
        default:
            throw fail("unknown kind '\(kind)' (garbage, crc, drop, stall, disconnect, reboot, silentreboot, clockloss, "
                       + "refusestream, answerdelay)")
        }
        if parts.count > 1 {
            guard let t = Self.parseDuration(String(parts[1])) else { throw fail("bad time '\(parts[1])'") }
            at = t
        } else {
            at = 0
        }
    }

    /// `90`, `90s`, `15m`, `2h`, `1.5h` → seconds.
    static func parseDuration(_ text: String) -> Double? {
        var t = text.lowercased()
        var scale = 1.0
        if let last = t.last, "smh".contains(last) {
            scale = last == "s" ? 1 : last == "m" ? 60 : 3600
            t.removeLast()
        }
        guard let v = Double(t), v >= 0, v.isFinite else { return nil }
        return v * scale
    }
}
