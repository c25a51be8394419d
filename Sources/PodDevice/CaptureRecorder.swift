// Writes a capture file (firmware-protocol.md §9) while a link runs: magic, then one
// record per frame in either direction. Each record goes out in a single write(2), so a
// recorder killed mid-night leaves at most one cut-short record, which readers skip.
import PodProtocol
import SystemCalls
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

package final class CaptureRecorder: Sendable {
    package let path: String
    private let fd: Int32
    private let failure = Mutex<SystemError?>(nil)

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
    package var error: SystemError? { failure.withLock { $0 } }

    func record(_ direction: Capture.Direction, frame: [UInt8], at micros: UInt64) {
        let bytes = Capture.encode(Capture.Record(receivedMicros: micros, direction: direction, frame: frame))
        failure.withLock { f in
            guard f == nil else { return }
            do throws(SystemError) { try SystemCalls.writeAll(fd, bytes) } catch { f = error }
        }
    }

    deinit { SystemCalls.close(fd) }
}

/// The capture file cannot be made (`--record` into a directory that is not there, a full
/// disk): said with the file, before any link is opened.
package struct CaptureRecorderError: Error, Equatable, CustomStringConvertible {
    package let path: String
    package let cause: SystemError
    package var description: String { "cannot write the capture \(path): \(String(cString: strerror(cause.errno)))" }
}
