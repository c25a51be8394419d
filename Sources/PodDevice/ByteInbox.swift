// Hand-off of received bytes from an I/O thread (dispatch source, libusb loop) to the one
// async reader, without losing bytes that arrive while nobody is waiting.
import Synchronization

final class ByteInbox: Sendable {
    private struct State {
        var pending: [UInt8] = []
        var end: TransportError?
        var waiter: CheckedContinuation<[UInt8], any Error>?
        var waiterID: UInt64 = 0
    }
    private let state = Mutex(State())

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
                enum Action { case value([UInt8]), error(any Error), wait }
                let action: Action = state.withLock { s in
                    if !s.pending.isEmpty {
                        defer { s.pending.removeAll(keepingCapacity: true) }
                        return .value(s.pending)
                    }
                    if let end = s.end { return .error(end) }
                    if Task.isCancelled { return .error(CancellationError()) }
                    if s.waiter != nil { return .error(TransportError.failed(.concurrentRead)) }
                    s.waiter = c
                    return .wait
                }
                switch action {
                case .value(let v): c.resume(returning: v)
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
