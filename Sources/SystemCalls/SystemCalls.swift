// Every raw syscall the hub's device layer (PodDevice) and the virtual pod (VirtualPod) make
// lives here, in the spirit of apple/swift-system's Internals/Syscalls.swift: errno is read
// right after the call, EINTR is retried in one place, and callers only see `SystemError`.
#if canImport(Glibc)
import Glibc
#endif

/// A failed syscall: which call, on what, and the errno it left.
package struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    package let call: String
    package let errno: Int32
    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }
    package var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
    /// The errors that mean "the device is gone", not "something is wrong with us".
    package var meansDisconnected: Bool { errno == EIO || errno == ENXIO || errno == ENODEV || errno == EPIPE }
}

/// flock(2) from <sys/file.h>, which the Glibc module map does not export (only the
/// `struct flock` of fcntl is visible under that name).
@_silgen_name("flock")
private func c_flock(_ fd: Int32, _ operation: Int32) -> Int32

/// Thin, checked wrappers over Glibc. Nothing here keeps state.
package enum SystemCalls {
    package static func open(_ path: String, flags: Int32, mode: mode_t = 0) throws(SystemError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags, mode)
            if fd >= 0 { return fd }
            let e = Glibc.errno
            if e != EINTR { throw SystemError(call: "open(\(path))", errno: e) }
        }
    }

    package static func close(_ fd: Int32) {
        // Linux releases the descriptor even when close reports EINTR: never retry.
        _ = Glibc.close(fd)
    }

    /// Reads what is available. Returns 0 at end of file; throws EAGAIN as an error so
    /// callers can tell "nothing yet" from "gone".
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            let e = Glibc.errno
            if e != EINTR { throw SystemError(call: "read", errno: e) }
        }
    }

    package static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        while true {
            let n = Glibc.write(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            let e = Glibc.errno
            if e != EINTR { throw SystemError(call: "write", errno: e) }
        }
    }

    /// Writes all of `bytes` to a blocking descriptor (files), retrying short writes.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n >= 0 { offset += n; continue }
            let e = Glibc.errno
            if e != EINTR { throw SystemError(call: "write", errno: e) }
        }
    }

    /// poll(2); returns the number of ready descriptors (0 on timeout).
    package static func poll(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws(SystemError) -> Int {
        while true {
            let n = fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
            if n >= 0 { return Int(n) }
            let e = Glibc.errno
            if e != EINTR { throw SystemError(call: "poll", errno: e) }
        }
    }

    /// Advisory exclusive lock, so two podbridge processes never share one pod (or one
    /// hub's database). Fails at once with EWOULDBLOCK while another holds it.
    package static func lockExclusive(_ fd: Int32) throws(SystemError) {
        if c_flock(fd, LOCK_EX | LOCK_NB) != 0 { throw SystemError(call: "flock", errno: Glibc.errno) }
    }

    package static func truncate(_ fd: Int32, to length: Int) throws(SystemError) {
        while Glibc.ftruncate(fd, off_t(length)) != 0 {
            let e = Glibc.errno
            if e != EINTR { throw SystemError(call: "ftruncate", errno: e) }
        }
    }

    /// TIOCEXCL: the kernel refuses further opens of the tty (root bypasses it; some
    /// drivers and umockdev's mocked ttys answer ENOTTY).
    package static func setExclusiveTTY(_ fd: Int32) throws(SystemError) {
        if Glibc.ioctl(fd, UInt(TIOCEXCL)) != 0 { throw SystemError(call: "ioctl(TIOCEXCL)", errno: Glibc.errno) }
    }

    /// Raw 8N1 at `speed`, no flow control, no echo, no line discipline processing.
    package static func makeRaw(_ fd: Int32, speed: speed_t) throws(SystemError) {
        var t = termios()
        if tcgetattr(fd, &t) != 0 { throw SystemError(call: "tcgetattr", errno: Glibc.errno) }
        cfmakeraw(&t)
        t.c_cflag |= tcflag_t(CLOCAL | CREAD)
        t.c_cflag &= ~tcflag_t(CRTSCTS)
        withUnsafeMutableBytes(of: &t.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        if cfsetispeed(&t, speed) != 0 || cfsetospeed(&t, speed) != 0 {
            throw SystemError(call: "cfsetspeed", errno: Glibc.errno)
        }
        if tcsetattr(fd, TCSANOW, &t) != 0 { throw SystemError(call: "tcsetattr", errno: Glibc.errno) }
        // tcsetattr succeeds if *any* change applied: read back to be sure raw mode took.
        var check = termios()
        if tcgetattr(fd, &check) != 0 { throw SystemError(call: "tcgetattr", errno: Glibc.errno) }
        if check.c_lflag & tcflag_t(ICANON | ECHO) != 0 { throw SystemError(call: "tcsetattr(raw)", errno: EINVAL) }
    }

    /// Drops whatever the tty buffered before we opened it (stale bytes from a previous owner).
    package static func flush(_ fd: Int32) throws(SystemError) {
        if tcflush(fd, TCIOFLUSH) != 0 { throw SystemError(call: "tcflush", errno: Glibc.errno) }
    }

    /// A non-blocking, close-on-exec pipe used to wake a poll() loop.
    package static func makeWakePipe() throws(SystemError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { throw SystemError(call: "pipe", errno: Glibc.errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (fds[0], fds[1])
    }

    package static func wake(_ fd: Int32) {
        var one: UInt8 = 1
        _ = Glibc.write(fd, &one, 1)
    }

    package static func drain(_ fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 64)
        while scratch.withUnsafeMutableBytes({ Glibc.read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    package static func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// An open descriptor's device and inode as "dev:ino", the form systemd gives the stream it
    /// connected to the journal in `JOURNAL_STREAM`; nil if it cannot be stat'ed.
    package static func fileIdentity(_ fd: Int32) -> String? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return "\(info.st_dev):\(info.st_ino)"
    }

    /// A pseudo-terminal pair (master, slave), both close-on-exec; the slave's path is returned
    /// so a peer (the virtual pod, a test) can be reached like a real tty.
    package static func openPTY() throws(SystemError) -> (master: Int32, slave: Int32, path: String) {
        let pair = try openPTYPair()
        do {
            // Raw mode on the slave: no echo, no line editing, no CR/LF translation, 8-bit clean.
            try makeRaw(pair.slave, speed: speed_t(B115200))
            try setNonBlocking(pair.master)
        } catch {
            close(pair.master)
            close(pair.slave)
            throw error
        }
        return pair
    }

    private static func openPTYPair() throws(SystemError) -> (master: Int32, slave: Int32, path: String) {
        var master: Int32 = -1
        var slave: Int32 = -1
        var name = [CChar](repeating: 0, count: 128)
        if openpty(&master, &slave, &name, nil, nil) != 0 { throw SystemError(call: "openpty", errno: Glibc.errno) }
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        return (master, slave, name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }

    package static func setNonBlocking(_ fd: Int32) throws(SystemError) {
        let flags = fcntl(fd, F_GETFL)
        if flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 { throw SystemError(call: "fcntl(O_NONBLOCK)", errno: Glibc.errno) }
    }

    /// Bytes waiting in a tty's input queue (FIONREAD): what its reader has not read yet.
    package static func pendingInput(_ fd: Int32) -> Int {
        var n: Int32 = 0
        return Glibc.ioctl(fd, UInt(FIONREAD), &n) == 0 ? Int(n) : 0
    }

    /// Points `link` at `target` atomically: a temporary symlink renamed over the old one.
    package static func replaceSymlink(_ link: String, to target: String) throws(SystemError) {
        let temp = link + ".tmp-\(getpid())"
        _ = Glibc.unlink(temp)
        guard symlink(target, temp) == 0 else { throw SystemError(call: "symlink(\(link))", errno: Glibc.errno) }
        guard rename(temp, link) == 0 else {
            let e = Glibc.errno
            _ = Glibc.unlink(temp)
            throw SystemError(call: "rename(\(link))", errno: e)
        }
    }

    /// Raises the soft limit of open descriptors (RLIMIT_NOFILE) to the hard limit and
    /// returns both as they are then. The soft limit is 1024 by default (systemd's too), and
    /// every client connection of the API is a descriptor: a burst of them must not leave the
    /// pod's link, the database or MQTT without one (EMFILE).
    package static func raiseOpenFileLimit() throws(SystemError) -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw SystemError(call: "getrlimit(RLIMIT_NOFILE)", errno: Glibc.errno)
        }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 else {
                throw SystemError(call: "setrlimit(RLIMIT_NOFILE)", errno: Glibc.errno)
            }
            limit = raised
        }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    package static func unlink(_ path: String) { _ = Glibc.unlink(path) }

    /// Reads `buffer.count` bytes at `offset` (fewer only at end of file).
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        while true {
            let n = Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            let e = Glibc.errno
            if e != EINTR { throw SystemError(call: "pread", errno: e) }
        }
    }

    /// Writes `buffer` at `offset` in one call (a regular file takes it whole).
    package static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        while true {
            let n = Glibc.pwrite(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            let e = Glibc.errno
            if e != EINTR { throw SystemError(call: "pwrite", errno: e) }
        }
    }

    /// CLOCK_MONOTONIC in nanoseconds: one time line for every process of the machine.
    package static func monotonicNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
