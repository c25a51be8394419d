import Synchronization

/// Accelerated time that a virtual pod and the hub reading it share when both run in one
/// process (the clocked tests), and that the pod holds still while its transmit queue is full.
///
/// Without it the pod's clock and the hub's run on the wall clock each: a hub starved of CPU
/// for a moment under load falls behind the pod, whose queue overflows (data lost, as on a
/// real pod), and the hub's clock reaches instants its data has not. With it, a hub that
/// falls behind makes time wait for it instead, so clocked tests give the same result
/// however many run at once on however few cores; a loaded machine only makes them slower.
public final class PacedTimeline: Sendable {
    private struct State {
        var held: Duration = .zero
        var heldSince: ContinuousClock.Instant?
        var holders = 0
    }

    private let origin: ContinuousClock.Instant
    private let state: Mutex<State>

    public init() {
        origin = .now
        state = Mutex(State())
    }

    /// Real time the timeline has run (not been held) since it began; constant while held.
    public func elapsed() -> Duration {
        let now = ContinuousClock.now
        return state.withLock { s in
            let holding = s.heldSince.map { now - $0 } ?? .zero
            return now - origin - s.held - holding
        }
    }

    /// Holds time still until every holder has released it.
    public func hold() {
        let now = ContinuousClock.now
        state.withLock { s in
            s.holders += 1
            if s.holders == 1 { s.heldSince = now }
        }
    }

    public func release() {
        let now = ContinuousClock.now
        state.withLock { s in
            guard s.holders > 0 else { return }
            s.holders -= 1
            if s.holders == 0, let since = s.heldSince {
                s.held += now - since
                s.heldSince = nil
            }
        }
    }

    /// Whether someone holds the timeline now.
    public var isHeld: Bool { state.withLock { $0.holders > 0 } }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    public var secondsValue: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}
