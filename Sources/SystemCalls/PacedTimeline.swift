import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Accelerated time that a virtual pod and the hub reading it share (the clocked tests), and
/// that the pod holds still while its transmit queue is full.
///
/// Without it the pod's clock and the hub's run on the wall clock each: a hub starved of CPU
/// for a moment under load falls behind the pod, whose queue overflows (data lost, as on a
/// real pod), and the hub's clock reaches instants its data has not. With it, a hub that
/// falls behind makes time wait for it instead, so clocked tests give the same result
/// however many run at once on however few cores; a loaded machine only makes them slower.
///
/// The pods that hold it run in one process. A hub in another process (`podbridge run
/// --clock-timeline FILE`) follows it through a file the holding process rewrites at each
/// hold and release.
package final class PacedTimeline: Sendable {
    /// Monotonic nanoseconds: when the timeline began, how long it was held before the
    /// current hold, and when the current hold began (0: not held).
    private struct Words: Equatable {
        var origin: UInt64
        var held: UInt64 = 0
        var heldSince: UInt64 = 0
    }

    private struct State {
        var words: Words
        var holders = 0
        var sequence: UInt64 = 0
    }

    private let state: Mutex<State>
    /// The file shared with a hub in another process; `writes`: this process holds the timeline.
    private let file: Int32?
    private let writes: Bool

    /// A timeline for pods and hubs of this process.
    package init() {
        state = Mutex(State(words: Words(origin: SystemCalls.monotonicNanos())))
        file = nil
        writes = true
    }

    /// A timeline this process's pods hold, published at `path` for a hub in another process.
    package init(publishingAt path: String) throws(SystemError) {
        state = Mutex(State(words: Words(origin: SystemCalls.monotonicNanos())))
        file = try SystemCalls.open(path, flags: O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o644)
        writes = true
        state.withLock { publish(&$0) }
    }

    /// The timeline another process publishes at `path`: read, never held, here.
    package init(followingFileAt path: String) throws(SystemError) {
        let fd = try SystemCalls.open(path, flags: O_RDONLY | O_CLOEXEC)
        file = fd
        writes = false
        state = Mutex(State(words: Words(origin: 0)))
        guard let words = Self.read(fd) else {
            SystemCalls.close(fd)
            throw SystemError(call: "read(\(path)): not a paced timeline", errno: EINVAL)
        }
        state.withLock { $0.words = words }
    }

    deinit {
        if let file { SystemCalls.close(file) }
    }

    /// Real time the timeline has run (not been held) since it began; constant while held.
    package func elapsed() -> Duration {
        let now = SystemCalls.monotonicNanos()
        var words = state.withLock { $0.words }
        if !writes, let file, let published = Self.read(file) { words = published }
        let holding = words.heldSince == 0 ? 0 : now &- min(now, words.heldSince)
        let running = (now &- min(now, words.origin)) &- min(now &- min(now, words.origin), words.held &+ holding)
        return .nanoseconds(Int64(running))
    }

    /// Holds time still until every holder has released it.
    package func hold() {
        guard writes else { return }
        let now = SystemCalls.monotonicNanos()
        state.withLock { s in
            s.holders += 1
            guard s.holders == 1 else { return }
            s.words.heldSince = now
            publish(&s)
        }
    }

    package func release() {
        guard writes else { return }
        let now = SystemCalls.monotonicNanos()
        state.withLock { s in
            guard s.holders > 0 else { return }
            s.holders -= 1
            guard s.holders == 0, s.words.heldSince != 0 else { return }
            s.words.held &+= now &- min(now, s.words.heldSince)
            s.words.heldSince = 0
            publish(&s)
        }
    }

    // MARK: The shared file: [sequence, origin, held, heldSince, sequence], little-endian UInt64s

    /// Rewrites the file in one pwrite; the sequence at both ends lets a reader that raced
    /// the write see it torn and read again.
    private func publish(_ s: inout State) {
        guard let file else { return }
        s.sequence &+= 1
        let record = [s.sequence, s.words.origin, s.words.held, s.words.heldSince, s.sequence]
        _ = record.withUnsafeBytes { try? SystemCalls.write(file, $0, at: 0) }
    }

    private static func read(_ fd: Int32) -> Words? {
        var record = [UInt64](repeating: 0, count: 5)
        for _ in 0..<100 {
            let n = record.withUnsafeMutableBytes { (try? SystemCalls.read(fd, into: $0, at: 0)) ?? -1 }
            guard n == 40 else { return nil }
            if record[0] == record[4], record[0] != 0 {
                return Words(origin: record[1], held: record[2], heldSince: record[3])
            }
        }
        return nil
    }
}
