// The CDC-ACM path: the pod as a tty. Raw mode, exclusive, flushed on open; a read of 0
// bytes (EOF) or EIO means the pod was unplugged, which the layer above treats as a
// disconnect and answers with a reconnect, never as a fatal error.
import Dispatch
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
    package init(path: String, baud: speed_t = speed_t(B115200)) throws {
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
        stream = DescriptorStream(fd: fd, label: path)
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
        stream = DescriptorStream(fd: pair.master, label: pair.path)
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

/// A non-blocking descriptor driven by a dispatch read source: reads go to a `ByteInbox`,
/// writes run on the same serial queue so they never race the close.
final class DescriptorStream: Sendable {
    private let fd: Int32
    private let queue: DispatchQueue
    // DispatchSource is thread-safe; it is only marked non-Sendable by the overlay.
    private nonisolated(unsafe) let source: any DispatchSourceRead
    private let inbox = ByteInbox()
    private let closed = Atomic<Bool>(false)
    private let released = DispatchSemaphore(value: 0)
    /// The one read buffer of this descriptor, used only on `queue` (the source's event
    /// handler): a read allocates nothing. Freed by the cancel handler, after the last read.
    private nonisolated(unsafe) let readBuffer: UnsafeMutableRawBufferPointer

    /// Bytes asked of the kernel per read: a 600x night is ~5 MB/s, so one read takes what a
    /// few milliseconds bring.
    static let readSize = 16 * 1024

    init(fd: Int32, label: String) {
        self.fd = fd
        self.queue = DispatchQueue(label: "podbridge.fd \(label)")
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        self.source = source
        let inbox = self.inbox
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readSize, alignment: 8)
        readBuffer = buffer
        source.setEventHandler { [source] in
            Self.drain(fd: fd, into: inbox, source: source, buffer: buffer)
        }
        let released = self.released
        source.setCancelHandler {
            SystemCalls.close(fd)
            inbox.finish(.closed)
            buffer.deallocate()
            released.signal()
        }
        source.activate()
    }

    /// Reads everything available now; ends the stream on EOF/EIO.
    private static func drain(fd: Int32, into inbox: ByteInbox, source: any DispatchSourceRead,
                              buffer: UnsafeMutableRawBufferPointer) {
        while true {
            do {
                let n = try SystemCalls.read(fd, into: buffer)
                if n == 0 {
                    inbox.finish(.disconnected(.endOfFile))
                    source.cancel()
                    return
                }
                inbox.deliver(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                if n < buffer.count { return }
            } catch let error as SystemError {
                if error.errno == EAGAIN || error.errno == EWOULDBLOCK { return }
                inbox.finish(error.meansDisconnected ? .disconnected(.system(error)) : .failed(.system(error)))
                source.cancel()
                return
            } catch {
                return
            }
        }
    }

    func read() async throws -> [UInt8] {
        try await inbox.next()
    }

    func write(_ bytes: [UInt8]) async throws {
        if closed.load(ordering: .acquiring) { throw TransportError.closed }
        let fd = self.fd
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            queue.async { [self] in
                if closed.load(ordering: .acquiring) { return c.resume(throwing: TransportError.closed) }
                c.resume(with: Result { try Self.writeAll(fd: fd, bytes: bytes) })
            }
        }
    }

    /// Writes on the serial queue (so it never races the cancel handler's close). Waits for
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

    /// Cancels the source and waits (briefly) until the descriptor is really closed, so
    /// the device (and its flock) is free when close() returns.
    func close() {
        if closed.exchange(true, ordering: .acquiringAndReleasing) { return }
        source.cancel()
        _ = released.wait(timeout: .now() + .seconds(2))
    }

    /// Runs `body` on the descriptor's queue after work queued so far.
    func afterClose(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }
}
