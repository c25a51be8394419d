// The byte-stream seam between a pod link (tty or USB bulk endpoints) and the protocol
// layer above it: the connection manager never knows which one it talks to.
import CLibUSB
import SystemCalls
#if canImport(Glibc)
import Glibc
#endif

/// Why a transport stopped delivering bytes.
public enum TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The device went away (EOF, EIO, LIBUSB_ERROR_NO_DEVICE): expect it to come back.
    case disconnected(Cause)
    /// `close()` was called on this side.
    case closed
    /// Something failed that is not an unplug (permissions, a device in use, a bad descriptor...).
    case failed(Cause)

    /// What exactly happened, kept as the system gave it (errno, libusb code) so callers
    /// can act on the cause instead of parsing a message.
    public enum Cause: Equatable, Sendable, CustomStringConvertible {
        /// A syscall failed: which one and its errno.
        case system(SystemError)
        /// A libusb call failed with this `LIBUSB_ERROR_*` code.
        case usb(call: String, code: Int32)
        /// The device end of a tty read end-of-file.
        case endOfFile
        /// POLLHUP/POLLERR while writing.
        case hangUp
        /// The tty accepted nothing for this long.
        case writeStalled(milliseconds: Int32)
        /// A bulk OUT transfer moved fewer bytes than asked.
        case shortWrite(sent: Int, of: Int)
        /// Another process holds the device's lock (flock).
        case inUse(path: String)
        /// The USB device has no vendor interface with a bulk IN and a bulk OUT endpoint.
        case noBulkInterface(endpoint: String)
        /// Discovery named a pod but offered no link to open.
        case noLink
        /// Two `read()` calls were outstanding on one transport (a bug in the caller).
        case concurrentRead
        /// An error thrown by a `Transport` from outside this module, as it describes itself.
        case foreign(String)

        public var description: String {
            switch self {
            case .system(let error): error.description
            case .usb(let call, let code): "\(call): \(USBTransport.name(code))"
            case .endOfFile: "end of file"
            case .hangUp: "hang-up while writing"
            case .writeStalled(let ms): "write to tty stalled for \(ms) ms"
            case .shortWrite(let sent, let total): "bulk OUT: short write \(sent)/\(total)"
            case .inUse(let path): "\(path) is in use by another process (flock)"
            case .noBulkInterface(let endpoint): "\(endpoint): no vendor interface with bulk IN and OUT endpoints"
            case .noLink: "no link"
            case .concurrentRead: "two concurrent read() calls on one transport"
            case .foreign(let text): text
            }
        }
    }

    /// What the failure means for whoever has to fix it, from the errno or libusb code.
    public enum Meaning: Sendable, Equatable {
        /// The hub's user may not open the device (EACCES, EPERM, LIBUSB_ERROR_ACCESS).
        case permissionDenied
        /// Another program holds it (flock, EBUSY, LIBUSB_ERROR_BUSY).
        case inUse
        /// The device node is not there (ENOENT, ENODEV, LIBUSB_ERROR_NOT_FOUND).
        case notFound
        /// It was unplugged or closed: nothing to fix, it is expected back.
        case gone
        case other
    }

    public var meaning: Meaning {
        switch self {
        case .closed, .disconnected: return .gone
        case .failed(let cause):
            switch cause {
            case .inUse: return .inUse
            case .system(let e) where e.errno == EACCES || e.errno == EPERM: return .permissionDenied
            case .system(let e) where e.errno == EBUSY: return .inUse
            case .system(let e) where e.errno == ENOENT || e.errno == ENODEV || e.errno == ENXIO: return .notFound
            case .usb(_, let code) where code == LIBUSB_ERROR_ACCESS.rawValue: return .permissionDenied
            case .usb(_, let code) where code == LIBUSB_ERROR_BUSY.rawValue: return .inUse
            case .usb(_, let code) where code == LIBUSB_ERROR_NOT_FOUND.rawValue || code == LIBUSB_ERROR_NO_DEVICE.rawValue:
                return .notFound
            default: return .other
            }
        }
    }

    /// Any error a transport threw, as a `TransportError`: cancellation is a close.
    public init(_ error: any Error) {
        switch error {
        case let error as TransportError: self = error
        case is CancellationError: self = .closed
        default: self = .failed(.foreign("\(error)"))
        }
    }

    /// The syscall error underneath, if the cause was one.
    public var systemError: SystemError? {
        switch self {
        case .disconnected(.system(let e)), .failed(.system(let e)): e
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .disconnected(let cause): "device disconnected (\(cause))"
        case .closed: "transport closed"
        case .failed(let cause): cause.description
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
