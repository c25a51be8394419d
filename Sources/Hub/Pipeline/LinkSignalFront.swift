import PodAnalysis
import PodDevice
import PodProtocol
import Synchronization

/// The synchronous front of one pod link: it takes the link's events where the link emits
/// them (on the session's reader, in order, as each frame is decoded) and runs PIEZO and
/// CAPACITANCE through the signal router and the per-side front ends right there, so a
/// streamed frame costs no hand-off between tasks. What goes on to the rest of the hub
/// (the link service's follower) is what it acts on: each side's completed seconds (one
/// output per side per second of data) and the link's other events (connect, clock, pod
/// events, status...), never one message per streamed frame.
///
/// The router is built for the pod HELLO announced (its `sample_rate`), and built again when
/// another pod, or the same pod at another rate, comes on the link.
final class LinkSignalFront: Sendable {
    private struct State {
        var router = PodSignalRouter()
        var serial: String?
        var sampleRate: UInt16?
    }
    private let state = Mutex(State())
    private let forward: @Sendable (PodLinkService.FollowerInput) -> Void

    /// - Parameter forward: takes what the follower must see, in order; called under this
    ///   front's lock, so it must only hand the value on (an `AsyncStream` yield).
    init(forward: @escaping @Sendable (PodLinkService.FollowerInput) -> Void) {
        self.forward = forward
    }

    /// One event of the link, in the order the link emitted them.
    func take(_ event: LinkEvent) {
        state.withLock { s in
            switch event {
            case .connected(let info, _):
                if s.serial != info.serial || s.sampleRate != info.sampleRate {
                    s.router = PodSignalRouter(sampleRate: Int(info.sampleRate))
                    s.serial = info.serial
                    s.sampleRate = info.sampleRate
                }
                forward(.link(event))
            case .clockSet(let anchor):
                s.router.anchor(anchor)
                forward(.link(event))
            case .frame(let frame, _):
                switch frame.message {
                case .piezo, .capacitance:
                    for output in s.router.apply(frame.message) { forward(.signal(output)) }
                default:
                    // A BOOT ends the anchor in force; the follower sees the event as well.
                    _ = s.router.apply(frame.message)
                    forward(.link(event))
                }
            default:
                forward(.link(event))
            }
        }
    }
}
