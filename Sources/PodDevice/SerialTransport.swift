// The CDC-ACM path: the pod as a tty. Raw mode, exclusive, flushed on open; a read of 0
// bytes (EOF) or EIO means the pod was unplugged, which the layer above treats as a
// disconnect and answers with a reconnect, never as a fatal error.
import Dispatch
import Foundation
import SystemCalls
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

package final class SerialTransport: Transport {
    package let endpoint: String
    /// Whether TIOCEXCL took (it fails on some drivers and on umockdev's ttys; flock still guards us).
    package let kernelExclusive: Bool
    private let stream: DescriptorStream

    /// Opens `path` (O_RDWR|O_NOCTTY|O_NONBLOCK|O_CLOEXEC), locks it, sets raw mode and
    /// flushes stale bytes. Throws `TransportError.failed` with the failing call.
    /// - Parameter pacing: how the reader lets a slow stream gather in the kernel (nil: every
    ///   byte as it comes).
    package init(path: String, baud: speed_t = speed_t(B115200), pacing: ReadPacing? = ReadPacing()) throws {
        endpoint = path
        let fd: Int32
        do {
            fd = try SystemCalls.open(path, flags: O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        } catch {
            throw TransportError.failed(.system(error))
        }
        do {
            try SystemCalls.lockExclusive(fd)
            try SystemCalls.makeRaw(fd, speed: baud)
            try SystemCalls.flush(fd)
        } catch {
            SystemCalls.close(fd)
            if error.call == "flock", error.errno == EWOULDBLOCK {
                throw TransportError.failed(.inUse(path: path))
            }
            throw TransportError.failed(.system(error))
        }
        kernelExclusive = (try? SystemCalls.setExclusiveTTY(fd)) != nil
        do {
            stream = try DescriptorStream(fd: fd, label: path, pacing: pacing)
        } catch {
            SystemCalls.close(fd)
            throw TransportError.failed(.system(error))
        }
    }

    package func read() async throws -> [UInt8] { try await stream.read() }
    package func write(_ bytes: [UInt8]) async throws { try await stream.write(bytes) }
    package func close() { stream.close() }
    deinit { stream.close() }
}

/// The master side of a pseudo-terminal, as a `Transport`: what a pod peer (the virtual
/// pod, a test's scripted pod) speaks through. Hub code opens `path` with `SerialTransport`
/// exactly as it opens /dev/ttyACM0. Closing it looks like an unplug to the hub.
package final class PseudoTerminal: Transport {
    /// The slave tty path (/dev/pts/N) to hand to the hub.
    package let path: String
    package var endpoint: String { "pty master of \(path)" }
    private let stream: DescriptorStream
    private let slave: Int32
    private let closed = Atomic<Bool>(false)

    package init() throws {
        let pair: (master: Int32, slave: Int32, path: String)
        do {
            pair = try SystemCalls.openPTY()
        } catch {
            throw TransportError.failed(.system(error))
        }
        path = pair.path
        // Keep our own slave descriptor open: with no slave open, reads of the master fail
        // with EIO, and the hub's first open would race that.
        slave = pair.slave
        do {
            stream = try DescriptorStream(fd: pair.master, label: pair.path)
        } catch {
            SystemCalls.close(pair.master)
            SystemCalls.close(pair.slave)
            throw TransportError.failed(.system(error))
        }
    }

    package func read() async throws -> [UInt8] { try await stream.read() }
    package func write(_ bytes: [UInt8]) async throws { try await stream.write(bytes) }

    /// Closes both sides: a hub holding `path` open sees end of file / EIO, like an unplug.
    /// Idempotent: close() and deinit both call it, and closing the slave descriptor twice
    /// would close whatever file reused that number in the meantime.
    package func close() {
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        stream.close()
        stream.afterClose { [slave] in SystemCalls.close(slave) }
    }
    deinit { close() }
}

/// How long the reader of a slow stream waits before reading again, so the kernel gathers
/// what the pod sends and one read (one wake-up of the reader, one hand-off to the session)
/// takes a few hundred milliseconds of it instead of each 100-ms block as it comes. The
/// pause is what the stream needs to bring about `gather` bytes at its rate, at most
/// `longest`: a pod at 1x (about 4 KB/s) is read 5 times a second, one at 60x every 30 ms,
/// one at 600x as fast as it comes, so the kernel never holds much more than `gather` unread.
/// The rate is the last read's, or half the one before if that was higher: one short read
/// after a lull of a fast stream (the pod's own hiccup) must not make it look slow and earn
/// a pause in which it would overflow the tty's buffer. Pure: the reader asks it after every read.
package struct ReadPacing: Sendable, Hashable {
    /// The longest pause: a reading is at most this (plus the read) late to the hub.
    package var longest: Duration
    /// Bytes a pause may let gather in the kernel's buffer.
    package var gather: Int
    /// Pauses shorter than this are not worth a wake-up of their own: read on at once.
    package var shortest: Duration
    /// After a write (a request), read at once for this long, so answers are not paced.
    package var afterWrite: Duration
    /// The stream's rate as the pacing sees it, bytes per second.
    package private(set) var rate: Double = 0

    package init(longest: Duration = .milliseconds(200), gather: Int = 8192, shortest: Duration = .milliseconds(10),
                 afterWrite: Duration = .seconds(1)) {
        self.longest = longest
        self.gather = gather
        self.shortest = shortest
        self.afterWrite = afterWrite
    }

    /// How long to wait before the next read, after one that brought `bytes` that came over
    /// `elapsed` (since the previous read), `sinceWrite` after the last write (nil: none yet);
    /// nil: read on at once.
    package mutating func pause(afterReading bytes: Int, over elapsed: Duration, sinceWrite: Duration?) -> Duration? {
        guard elapsed > .zero else { return nil }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        rate = max(Double(bytes) / seconds, rate / 2)
        if let sinceWrite, sinceWrite < afterWrite { return nil }
        guard rate > 0 else { return nil }
        let fill = Duration.seconds(Double(gather) / rate)
        let pause = min(fill, longest)
        return pause >= shortest ? pause : nil
    }
}

/// A non-blocking descriptor read by a thread of its own: it waits in poll(2), reads all
/// there is into one buffer and hands it to a `ByteInbox`; with `pacing`, it then waits
/// before the next poll as long as `ReadPacing` says (a pod at 1x sends a block every
/// 100 ms), so the kernel buffers and the hub wakes 5 times a second, not at every block.
/// Backpressure is by not reading: a reader behind leaves the bytes in the kernel's buffer.
/// A write (a request) or `close()` ends a pause at once through a wake pipe.
/// Writes run on a serial queue (a full tty waits for POLLOUT there, never on a task's
/// thread); the reader closes the descriptor on that queue, so a write never uses a closed one.
final class DescriptorStream: Sendable {
    /// What the reader thread and the callers share.
    private final class Shared: Sendable {
        let stop = Atomic<Bool>(false)
        /// Monotonic nanoseconds of the last write (0: none yet).
        let lastWrite = Atomic<UInt64>(0)
        /// The descriptor is closed (the reader ended): writes must not touch it.
        let fdClosed = Atomic<Bool>(false)
    }

    private let fd: Int32
    private let queue: DispatchQueue
    private let inbox: ByteInbox
    private let shared = Shared()
    private let closed = Atomic<Bool>(false)
    private let wake: (read: Int32, write: Int32)
    private let released = DispatchSemaphore(value: 0)

    /// Bytes asked of the kernel per read: a 600x night is ~5 MB/s, so one read takes what a
    /// few milliseconds bring.
    static let readSize = 16 * 1024
    /// Bytes read but not yet taken by the session beyond which the reader stops reading
    /// (a third of a second at 600x): a hub that falls behind leaves the rest in the kernel's
    /// buffer, and a pod that cannot send drops and counts frames, rather than the hub's
    /// memory growing without bound.
    static let unreadLimit = 1 << 20

    /// - Parameter pacing: nil reads every byte as it comes (a pod's side of a link, tests).
    init(fd: Int32, label: String, pacing: ReadPacing? = nil) throws(SystemError) {
        self.fd = fd
        self.queue = DispatchQueue(label: "podbridge.fd \(label)")
        let wake = try SystemCalls.makeWakePipe()
        self.wake = wake
        inbox = ByteInbox(onRoom: { SystemCalls.wake(wake.write) })
        let (inbox, shared, queue, released) = (self.inbox, self.shared, self.queue, self.released)
        let thread = Thread {
            Self.readLoop(fd: fd, wakeFD: wake.read, inbox: inbox, shared: shared, pacing: pacing)
            // The reader ends (unplug, error, close): the descriptor is closed after any write
            // already queued, and no later write touches it.
            queue.sync {
                shared.fdClosed.store(true, ordering: .releasing)
                SystemCalls.close(fd)
            }
            inbox.finish(.closed)
            released.signal()
        }
        thread.name = "podbridge.read \(label)"
        thread.start()
    }

    /// Waits for bytes, reads them, hands them on; pauses while the stream is slow. Returns
    /// when the descriptor ends (the inbox told why) or `close()` stops it.
    private static func readLoop(fd: Int32, wakeFD: Int32, inbox: ByteInbox, shared: Shared, pacing: ReadPacing?) {
        var pacing = pacing
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readSize, alignment: 8)
        defer { buffer.deallocate() }
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var pauseFDs = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var lastRead = SystemCalls.monotonicNanos()
        while !shared.stop.load(ordering: .acquiring) {
            fds[0].revents = 0
            fds[1].revents = 0
            do {
                _ = try SystemCalls.poll(&fds, timeoutMilliseconds: -1)
            } catch {
                inbox.finish(.failed(.system(error)))
                return
            }
            if fds[1].revents != 0 { SystemCalls.drain(wakeFD) }
            if shared.stop.load(ordering: .acquiring) { return }
            guard fds[0].revents != 0 else { continue }
            guard let brought = drain(fd: fd, into: inbox, buffer: buffer) else { return }
            if inbox.wantsRoom(above: unreadLimit) {
                // Backpressure: not read until the session took what waits (it wakes us).
                pauseFDs[0].revents = 0
                _ = try? SystemCalls.poll(&pauseFDs, timeoutMilliseconds: -1)
                if pauseFDs[0].revents != 0 { SystemCalls.drain(wakeFD) }
                continue
            }
            if brought == 0, fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                // Hung up with nothing to read: poll would report it again at once, forever.
                inbox.finish(.disconnected(.hangUp))
                return
            }
            let now = SystemCalls.monotonicNanos()
            let elapsed = Duration.nanoseconds(Int64(now &- lastRead))
            lastRead = now
            let written = shared.lastWrite.load(ordering: .relaxed)
            // A write on another thread may have stamped its time after `now` was read.
            let sinceWrite = written == 0 ? nil : Duration.nanoseconds(Int64(now > written ? now - written : 0))
            if let pause = pacing?.pause(afterReading: brought, over: elapsed, sinceWrite: sinceWrite) {
                pauseFDs[0].revents = 0
                let ms = Int32(pause.components.seconds * 1000 + pause.components.attoseconds / 1_000_000_000_000_000)
                _ = try? SystemCalls.poll(&pauseFDs, timeoutMilliseconds: ms)
                if pauseFDs[0].revents != 0 { SystemCalls.drain(wakeFD) }
            }
        }
    }

    /// Reads everything available now (until EAGAIN); returns how many bytes, or nil when the
    /// stream ended (EOF/EIO: the inbox was told).
    private static func drain(fd: Int32, into inbox: ByteInbox, buffer: UnsafeMutableRawBufferPointer) -> Int? {
        var total = 0
        while true {
            do {
                let n = try SystemCalls.read(fd, into: buffer)
                if n == 0 {
                    inbox.finish(.disconnected(.endOfFile))
                    return nil
                }
                inbox.deliver(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                total += n
                if total >= unreadLimit { return total }  // the caller looks at what waits unread
                // On until EAGAIN: a tty hands out at most its 4-KB line buffer per read, so a
                // short read does not mean the kernel holds nothing more.
            } catch {
                if error.errno == EAGAIN || error.errno == EWOULDBLOCK { return total }
                inbox.finish(error.meansDisconnected ? .disconnected(.system(error)) : .failed(.system(error)))
                return nil
            }
        }
    }

    func read() async throws -> [UInt8] {
        try await inbox.next()
    }

    func write(_ bytes: [UInt8]) async throws {
        if closed.load(ordering: .acquiring) { throw TransportError.closed }
        let (fd, shared, wakeFD) = (self.fd, self.shared, self.wake.write)
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            queue.async {
                if shared.fdClosed.load(ordering: .acquiring) { return c.resume(throwing: TransportError.closed) }
                // The answer is read as it comes: a paused reader is woken and reads on at once.
                shared.lastWrite.store(SystemCalls.monotonicNanos(), ordering: .relaxed)
                SystemCalls.wake(wakeFD)
                c.resume(with: Result { try Self.writeAll(fd: fd, bytes: bytes) })
            }
        }
    }

    /// Writes on the serial queue (so it never races the reader's close). Waits for
    /// POLLOUT when the tty buffer is full, giving up after `timeout` of no progress.
    private static func writeAll(fd: Int32, bytes: [UInt8], timeoutMilliseconds: Int32 = 2000) throws {
        var offset = 0
        while offset < bytes.count {
            do {
                let n = try bytes.withUnsafeBytes { try SystemCalls.write(fd, UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                offset += n
            } catch let error as SystemError where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
                var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                let ready = try SystemCalls.poll(&fds, timeoutMilliseconds: timeoutMilliseconds)
                if ready == 0 { throw TransportError.failed(.writeStalled(milliseconds: timeoutMilliseconds)) }
                if fds[0].revents & Int16(POLLHUP | POLLERR) != 0 { throw TransportError.disconnected(.hangUp) }
            } catch let error as SystemError {
                throw error.meansDisconnected ? TransportError.disconnected(.system(error)) : TransportError.failed(.system(error))
            }
        }
    }

    /// Stops the reader and waits (briefly) until the descriptor is really closed, so
    /// the device (and its flock) is free when close() returns.
    func close() {
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        shared.stop.store(true, ordering: .releasing)
        SystemCalls.wake(wake.write)
        _ = released.wait(timeout: .now() + .seconds(2))
    }

    /// Runs `body` on the descriptor's queue after work queued so far.
    func afterClose(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }

    deinit {
        close()
        SystemCalls.close(wake.read)
        SystemCalls.close(wake.write)
    }
}
