#if canImport(Glibc)
import Glibc
#endif
import PodProtocol

/// The hub side of a real pty link, for tests: opens the virtual pod's tty like a serial
/// port (raw mode), sends requests with PodProtocol's encoder and reads frames with its
/// decoder, so every figure the tests check is what a real hub would count.
final class HubLink {
    let fd: Int32
    var encoder = FrameEncoder()
    let decoder = FrameDecoder()
    /// Every valid frame received, in order.
    private(set) var frames: [DecodedFrame] = []
    /// True once the pod closed its end (EOF or EIO on read).
    private(set) var hungUp = false
    private var nextID: UInt16 = 1

    struct OpenError: Error { var errno: Int32 }

    init(path: String) throws {
        let f = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard f >= 0 else { throw OpenError(errno: errno) }
        fd = f
        var t = termios()
        if tcgetattr(fd, &t) == 0 {
            cfmakeraw(&t)
            _ = tcsetattr(fd, TCSANOW, &t)
        }
        _ = tcflush(fd, TCIOFLUSH)
        var zero: UInt8 = 0
        _ = write(fd, &zero, 1)
    }

    deinit { close(fd) }

    /// Sends a request; returns its id.
    @discardableResult
    func send(_ message: Message, id: UInt16? = nil, flags: FrameFlags = []) -> UInt16 {
        let rid = id ?? nextID
        if id == nil { nextID = nextID == UInt16.max ? 1 : nextID + 1 }
        // Test messages always fit a frame.
        let bytes = (try? encoder.encode(message, requestID: rid, flags: flags)) ?? []
        sendRaw(bytes)
        return rid
    }

    func sendRaw(_ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + off, bytes.count - off) }
            if n > 0 { off += n } else if errno != EAGAIN && errno != EINTR { return } else { _ = pump(timeout: 0.01) }
        }
    }

    /// Reads what arrives within `timeout` seconds (returns early once something arrived).
    @discardableResult
    func pump(timeout: Double) -> Int {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, Int32(timeout * 1000)) > 0 else { return 0 }
        var buf = [UInt8](repeating: 0, count: 65536)
        var total = 0
        while true {
            let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                total += n
                buf.withUnsafeBytes { raw in
                    decoder.decode(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { frames.append($0) }
                }
                continue
            }
            if n == 0 || errno == EIO { hungUp = true }
            return total
        }
    }

    /// Waits (at most `deadline` seconds, a guard against hanging, not a timed assertion) for
    /// a frame received from index `from` on that satisfies `match`.
    func wait(from: Int = 0, deadline: Double = 20, _ match: (DecodedFrame) -> Bool) -> DecodedFrame? {
        var checked = from
        let end = now() + deadline
        while true {
            while checked < frames.count {
                if match(frames[checked]) { return frames[checked] }
                checked += 1
            }
            if hungUp || now() > end { return nil }
            pump(timeout: 0.05)
        }
    }

    /// Sends a request and waits for the response with its id.
    func request(_ message: Message, id: UInt16? = nil, flags: FrameFlags = []) -> (Response, FrameHeader)? {
        let start = frames.count
        let rid = send(message, id: id, flags: flags)
        guard let f = wait(from: start, { $0.header.requestID == rid && $0.header.type & 0x80 != 0 }) else { return nil }
        if case .response(let r) = f.message { return (r, f.header) }
        return nil
    }

    /// Waits until the link hangs up.
    func waitForHangUp(deadline: Double = 20) -> Bool {
        let end = now() + deadline
        while !hungUp && now() < end { pump(timeout: 0.05) }
        return hungUp
    }

    func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

extension DecodedFrame {
    var event: PodEvent? { if case .event(let e) = message { e } else { nil } }
    var piezo: PiezoBlock? { if case .piezo(let p) = message { p } else { nil } }
}
