#if canImport(Glibc)
import Glibc
#endif
import SystemCalls

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

    init() throws(SystemError) {
        (master, slave, path) = try SystemCalls.openPTY()
    }

    private var closed = false

    /// Closes both ends: the hub's open descriptor sees end of file / EIO, the path vanishes.
    func close() {
        guard !closed else { return }
        closed = true
        SystemCalls.close(master)
        SystemCalls.close(slave)
        slave = -1
    }

    deinit { close() }

    /// Bytes read from the hub; 0 when nothing is waiting (or no hub has the slave open:
    /// EIO), nil when the link is unusable.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        do {
            return try SystemCalls.read(master, into: buffer)
        } catch {
            return [EAGAIN, EWOULDBLOCK, EIO].contains(error.errno) ? 0 : nil
        }
    }

    /// Bytes written but not yet read by the hub (waiting in the slave's input queue);
    /// closing the master now would discard them.
    var unreadByHub: Int { slave >= 0 ? SystemCalls.pendingInput(slave) : 0 }

    /// Writes what the tty accepts now; returns the count (0 when full).
    func write(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count > 0 else { return 0 }
        return (try? SystemCalls.write(master, bytes)) ?? 0
    }
}
