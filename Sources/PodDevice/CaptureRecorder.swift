// Writes a capture file (firmware-protocol.md §9) while a link runs: magic, then one
// record per frame in either direction. Each record goes out in a single write(2), so a
// recorder killed mid-night leaves at most one cut-short record, which readers skip.
import PodProtocol
import SystemCalls
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

public final class CaptureRecorder: Sendable {
    public let path: String
    private let fd: Int32
    private let failure = Mutex<SystemError?>(nil)

    /// Creates (or truncates) `path` and writes the magic.
    public init(path: String) throws {
        self.path = path
        do {
            fd = try SystemCalls.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o644)
            try SystemCalls.writeAll(fd, Capture.magic)
        } catch {
            throw TransportError.failed(.system(error))
        }
    }

    /// The first write error (a full disk), if any: recording stops there, the link does not.
    public var error: SystemError? { failure.withLock { $0 } }

    func record(_ direction: Capture.Direction, frame: [UInt8], at micros: UInt64) {
        let bytes = Capture.encode(Capture.Record(receivedMicros: micros, direction: direction, frame: frame))
        failure.withLock { f in
            guard f == nil else { return }
            do throws(SystemError) { try SystemCalls.writeAll(fd, bytes) } catch { f = error }
        }
    }

    deinit { SystemCalls.close(fd) }
}
