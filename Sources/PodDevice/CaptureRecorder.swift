// Writes a capture file (firmware-protocol.md §9) while a link runs: magic, then one
// record per frame in either direction. The records of one read of the link (or one
// request) go out together in a single write(2) at `flush()`, not a write per frame (a
// syscall per frame was a tenth of the hub's CPU at 1x); a recorder killed mid-night leaves
// at most one cut-short record, which readers skip.
import PodProtocol
import SystemCalls
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

package final class CaptureRecorder: Sendable {
    package let path: String
    private let fd: Int32
    private struct State {
        var failure: SystemError?
        /// Records not yet written (one read's worth).
        var pending: [UInt8] = []
    }
    private let state = Mutex(State())

    /// Creates (or truncates) `path` and writes the magic.
    package init(path: String) throws(CaptureRecorderError) {
        self.path = path
        let fd: Int32
        do {
            fd = try SystemCalls.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o644)
        } catch {
            throw CaptureRecorderError(path: path, cause: error)
        }
        do {
            try SystemCalls.writeAll(fd, Capture.magic)
        } catch {
            SystemCalls.close(fd)
            throw CaptureRecorderError(path: path, cause: error)
        }
        self.fd = fd
    }

    /// The first write error (a full disk), if any: recording stops there, the link does not.
    package var error: SystemError? { state.withLock { $0.failure } }

    /// Queues one record; `flush()` writes it.
    func record(_ direction: Capture.Direction, frame: [UInt8], at micros: UInt64) {
        let bytes = Capture.encode(Capture.Record(receivedMicros: micros, direction: direction, frame: frame))
        state.withLock { s in
            guard s.failure == nil else { return }
            s.pending.append(contentsOf: bytes)
        }
    }

    /// Writes the records queued since the last flush, in one write(2).
    func flush() {
        state.withLock { s in
            guard s.failure == nil, !s.pending.isEmpty else { return }
            do throws(SystemError) { try SystemCalls.writeAll(fd, s.pending) } catch { s.failure = error }
            s.pending.removeAll(keepingCapacity: true)
        }
    }

    deinit {
        flush()
        SystemCalls.close(fd)
    }
}

/// The capture file cannot be made (`--record` into a directory that is not there, a full
/// disk): said with the file, before any link is opened.
package struct CaptureRecorderError: Error, Equatable, CustomStringConvertible {
    package let path: String
    package let cause: SystemError
    package var description: String { "cannot write the capture \(path): \(String(cString: strerror(cause.errno)))" }
}
