#if canImport(Glibc)
import Glibc
#endif

/// Why the virtual pod could not do something with its pseudo-terminal.
public struct VirtualPodError: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32
    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }
    public var description: String { "\(operation): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// The pod end of a pseudo-terminal: the master descriptor the firmware reads and writes,
/// and the slave tty path a hub opens like a /dev/ttyACM device.
///
/// The pod keeps its own slave descriptor open, so the master never sees a hang-up while no
/// hub is attached (a real USB device stays enumerated too); what it sends meanwhile waits in
/// the tty buffer, which a hub discards when it opens the port (flush on open).
final class PseudoTerminal {
    let master: Int32
    private var slave: Int32
    let path: String

    init() throws(VirtualPodError) {
        var m: Int32 = -1, s: Int32 = -1
        var name = [CChar](repeating: 0, count: 128)
        guard openpty(&m, &s, &name, nil, nil) == 0 else { throw VirtualPodError("openpty", errno: errno) }
        master = m
        slave = s
        path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // Raw mode on the slave: no echo, no line editing, no CR/LF translation, 8-bit clean.
        var t = termios()
        if tcgetattr(s, &t) == 0 {
            cfmakeraw(&t)
            _ = tcsetattr(s, TCSANOW, &t)
        }
        _ = fcntl(m, F_SETFD, FD_CLOEXEC)
        _ = fcntl(s, F_SETFD, FD_CLOEXEC)
        let flags = fcntl(m, F_GETFL)
        guard flags >= 0, fcntl(m, F_SETFL, flags | O_NONBLOCK) == 0 else {
            let e = errno
            close()
            throw VirtualPodError("fcntl(O_NONBLOCK)", errno: e)
        }
    }

    private var closed = false

    /// Closes both ends: the hub's open descriptor sees end of file / EIO, the path vanishes.
    func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(master)
        _ = Glibc.close(slave)
        slave = -1
    }

    deinit { close() }

    /// Bytes read from the hub; empty when nothing is waiting. Errors other than EAGAIN end the link.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        while true {
            let n = Glibc.read(master, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK || e == EIO { return 0 }
            return nil
        }
    }

    /// Bytes written but not yet read by the hub (waiting in the slave's input queue);
    /// closing the master now would discard them.
    var unreadByHub: Int {
        var n: Int32 = 0
        guard slave >= 0, ioctl(slave, UInt(FIONREAD), &n) == 0 else { return 0 }
        return Int(n)
    }

    /// Writes what the tty accepts now; returns the count (0 when full).
    func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count > 0 else { return 0 }
        while true {
            let n = Glibc.write(master, bytes.baseAddress, bytes.count)
            if n >= 0 { return n }
            let e = errno
            if e == EINTR { continue }
            return 0
        }
    }
}

/// Points a stable symlink (e.g. /tmp/pod0) at the current tty, atomically (a temporary
/// link renamed over the old one), so CLI users keep one path across "replugs".
enum StableLink {
    static func point(_ link: String, to target: String) throws(VirtualPodError) {
        let temp = link + ".tmp-\(getpid())"
        _ = unlink(temp)
        guard symlink(target, temp) == 0 else { throw VirtualPodError("symlink(\(link))", errno: errno) }
        guard rename(temp, link) == 0 else {
            let e = errno
            _ = unlink(temp)
            throw VirtualPodError("rename(\(link))", errno: e)
        }
    }

    static func remove(_ link: String) {
        _ = unlink(link)
    }
}
