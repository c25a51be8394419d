// Hand-off of received bytes from an I/O thread (a descriptor's reader, libusb loop) to the
// one async reader, without losing bytes that arrive while nobody is waiting. An I/O side
// that can wait (a descriptor: the kernel buffers meanwhile) asks whether the inbox holds too
// much (`wantsRoom`) and is called back once the reader took it, so a hub that falls behind
// leaves the bytes in the kernel, not in memory.
import Synchronization

final class ByteInbox: Sendable {
    private struct State {
        var pending: [UInt8] = []
        var end: TransportError?
        var waiter: CheckedContinuation<[UInt8], any Error>?
        var waiterID: UInt64 = 0
        /// The I/O side waits for the reader to take what is pending (`wantsRoom`).
        var roomWanted = false
    }
    private let state = Mutex(State())
    /// Tells the I/O side the reader took the pending bytes it waited on.
    private let onRoom: (@Sendable () -> Void)?

    init(onRoom: (@Sendable () -> Void)? = nil) { self.onRoom = onRoom }

    /// Whether more than `limit` bytes wait unread; if so, `onRoom` is called once the reader
    /// takes them (the caller then stops reading until it is).
    func wantsRoom(above limit: Int) -> Bool {
        state.withLock { s in
            guard s.end == nil, s.pending.count > limit else { return false }
            s.roomWanted = true
            return true
        }
    }

    /// Called by the I/O side with freshly read bytes.
    func deliver(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        let handoff: (CheckedContinuation<[UInt8], any Error>, [UInt8])? = state.withLock { s in
            guard s.end == nil else { return nil }
            s.pending.append(contentsOf: bytes)
            guard let w = s.waiter else { return nil }
            s.waiter = nil
            defer { s.pending.removeAll(keepingCapacity: true) }
            return (w, s.pending)
        }
        if let (waiter, chunk) = handoff { waiter.resume(returning: chunk) }
    }

    /// Called once by the I/O side when no more bytes will come. Bytes already delivered
    /// are still handed out before the end is reported.
    func finish(_ reason: TransportError) {
        let waiter: CheckedContinuation<[UInt8], any Error>? = state.withLock { s in
            if s.end == nil { s.end = reason }
            guard s.pending.isEmpty, let w = s.waiter else { return nil }
            s.waiter = nil
            return w
        }
        waiter?.resume(throwing: reason)
    }

    var isFinished: Bool { state.withLock { $0.end != nil } }
    /// A reader is waiting and nothing is buffered: worth asking the device for more.
    var hasWaiter: Bool { state.withLock { $0.waiter != nil && $0.pending.isEmpty } }

    func next() async throws -> [UInt8] {
        let id = state.withLock { s -> UInt64 in s.waiterID &+= 1; return s.waiterID }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<[UInt8], any Error>) in
                enum Action { case value([UInt8], room: Bool), error(any Error), wait }
                let action: Action = state.withLock { s in
                    if !s.pending.isEmpty {
                        defer { s.pending.removeAll(keepingCapacity: true) }
                        let room = s.roomWanted
                        s.roomWanted = false
                        return .value(s.pending, room: room)
                    }
                    if let end = s.end { return .error(end) }
                    if Task.isCancelled { return .error(CancellationError()) }
                    if s.waiter != nil { return .error(TransportError.failed(.concurrentRead)) }
                    s.waiter = c
                    return .wait
                }
                switch action {
                case .value(let v, let room):
                    if room { onRoom?() }
                    c.resume(returning: v)
                case .error(let e): c.resume(throwing: e)
                case .wait: break
                }
            }
        } onCancel: {
            let w: CheckedContinuation<[UInt8], any Error>? = state.withLock { s in
                guard s.waiterID == id, let w = s.waiter else { return nil }
                s.waiter = nil
                return w
            }
            w?.resume(throwing: CancellationError())
        }
    }
}
