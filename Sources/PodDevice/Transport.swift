// The byte-stream seam between a pod link (tty or USB bulk endpoints) and the protocol
// layer above it: the connection manager never knows which one it talks to.

/// Why a transport stopped delivering bytes.
public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The device went away (EOF, EIO, LIBUSB_ERROR_NO_DEVICE): expect it to come back.
    case disconnected(String)
    /// `close()` was called on this side.
    case closed
    /// Something failed that is not an unplug (permissions, a bad descriptor...).
    case failed(String)

    public var description: String {
        switch self {
        case .disconnected(let why): "device disconnected (\(why))"
        case .closed: "transport closed"
        case .failed(let why): why
        }
    }
}

/// A full-duplex byte pipe to one pod. Implementations are safe to call from any task;
/// at most one `read()` may be outstanding at a time.
public protocol Transport: AnyObject, Sendable {
    /// Human-readable endpoint ("/dev/ttyACM0", "usb 001/011 if 2").
    var endpoint: String { get }
    /// Waits for the next bytes (never empty). Throws `TransportError.disconnected` when
    /// the device goes away and `.closed` after `close()`; cancellation throws CancellationError.
    func read() async throws -> [UInt8]
    /// Writes all bytes or throws.
    func write(_ bytes: [UInt8]) async throws
    /// Releases the device (locks, claimed interfaces, descriptors). Idempotent.
    func close()
}
