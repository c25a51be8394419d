// Values shared by the session (one open link) and the connection (the link across
// unplugs): timing, errors, counters and the events the rest of the hub sees.
import PodProtocol

/// Timeouts, retries and backoff. Defaults are the spec's (firmware-protocol.md §7.2);
/// tests inject short ones.
package struct LinkTiming: Sendable, Hashable {
    /// How long to wait for a response before re-sending (spec: 500 ms).
    package var responseTimeout: Duration
    /// Re-sends after the first attempt, same request id, RETRANSMIT flag (spec: 3).
    package var retries: Int
    /// Wait before re-asking after a BUSY nack (spec: 100 ms), with a fresh request id.
    package var busyDelay: Duration
    /// First reconnect delay; doubles per failed attempt up to `reconnectMaxDelay`.
    package var reconnectInitialDelay: Duration
    package var reconnectMaxDelay: Duration
    /// Each delay is scaled by a random factor in 1 ± jitter, so many hubs (or a hub and
    /// a flapping pod) do not fall into lock-step.
    package var jitter: Double
    /// Silence after which the hub probes the pod with GET_STATUS (spec §7.7: a streaming
    /// pod sends at least one frame a second; 3 s leaves room for a stalled USB host).
    package var livenessTimeout: Duration
    /// After a final nack of a start-up request (HELLO, START_STREAM), the hub reports it and
    /// asks again after this long, not in a loop (spec §7.6).
    package var refusedRetryDelay: Duration
    /// How often a busy link is asked GET_STATUS all the same: a pod that lost its clock without
    /// a reset (§7.5) streams on, and only its status says so; unnoticed, its alarm fails when due.
    package var statusInterval: Duration

    package init(responseTimeout: Duration = .milliseconds(500), retries: Int = 3, busyDelay: Duration = .milliseconds(100),
                reconnectInitialDelay: Duration = .milliseconds(500), reconnectMaxDelay: Duration = .seconds(30),
                jitter: Double = 0.2, livenessTimeout: Duration = .seconds(3), refusedRetryDelay: Duration = .seconds(300),
                statusInterval: Duration = .seconds(60)) {
        self.statusInterval = statusInterval
        self.responseTimeout = responseTimeout
        self.retries = retries
        self.busyDelay = busyDelay
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaxDelay = reconnectMaxDelay
        self.jitter = jitter
        self.livenessTimeout = livenessTimeout
        self.refusedRetryDelay = refusedRetryDelay
    }

    /// The delay before reconnect attempt `attempt` (0-based): capped exponential, jittered.
    /// When the liveness clock should look at the link next: the moment the silence since
    /// `lastFrame` reaches `livenessTimeout` (spec §7.7: the probe goes out at 3 s, not at the
    /// next beat of a coarser timer), or `due` (the periodic status check, a refused stream's
    /// retry) if that comes first. A moment already past (a probe is out, a check not yet
    /// handled) counts as a beat from `now` (a third of the timeout), so it never spins; a
    /// streaming link wakes it about every 3 s, not every beat.
    package func nextLivenessCheck(lastFrame: ContinuousClock.Instant, now: ContinuousClock.Instant,
                                   due: ContinuousClock.Instant? = nil) -> ContinuousClock.Instant {
        let beat = now + livenessTimeout / 3
        let silentAt = lastFrame + livenessTimeout
        let next = silentAt > now ? silentAt : beat
        guard let due else { return next }
        return min(next, due > now ? due : beat)
    }

    package func reconnectDelay(attempt: Int, random: Double) -> Duration {
        let base = reconnectInitialDelay * Double(1 << min(attempt, 20))
        let capped = min(base, reconnectMaxDelay)
        let factor = 1 + jitter * (2 * min(max(random, 0), 1) - 1)
        return capped * factor
    }
}

/// What can go wrong talking to a pod, in words a user can act on.
package enum PodLinkError: Error, Equatable, Sendable, CustomStringConvertible {
    /// HELLO found no common protocol version: the pod needs other firmware (or the hub an update).
    case protocolVersionMismatch(hub: ClosedRange<UInt8>, pod: String)
    /// The pod refused a request; it changed nothing (spec §6.1).
    case nack(request: MessageType, status: Status)
    /// No response after the first attempt and all retries.
    case timeout(request: MessageType, attempts: Int)
    /// A response arrived under the request's id with another type or body.
    case unexpectedResponse(request: MessageType, detail: String)
    /// The link went away while the request was outstanding.
    case disconnected(TransportError)
    /// No pod is connected right now.
    case notConnected
    /// A pod with another serial answered where we expected a known one.
    case wrongPod(expected: String, found: String)
    /// The pod did not announce the feature the request needs in HELLO: it was not sent.
    case unsupportedByPod(request: MessageType, feature: String)
    /// The hub tried to send something that is not a request or cannot be encoded (a bug).
    case invalidRequest(String)

    package var description: String {
        switch self {
        case .protocolVersionMismatch(let hub, let pod):
            "protocol version mismatch: this hub speaks v\(hub.lowerBound)–v\(hub.upperBound), the pod \(pod); update the pod firmware or podbridge"
        case .nack(let request, let status): "pod refused \(request): \(status) (status \(status.rawValue))"
        case .timeout(let request, let attempts): "no response to \(request) after \(attempts) attempts"
        case .unexpectedResponse(let request, let detail): "unexpected response to \(request): \(detail)"
        case .disconnected(let why): "disconnected: \(why)"
        case .notConnected: "no pod connected"
        case .wrongPod(let expected, let found): "expected pod \(expected), found \(found)"
        case .unsupportedByPod(let request, let feature): "not sent \(request): the pod has no \(feature) (HELLO feature bits)"
        case .invalidRequest(let why): "invalid request: \(why)"
        }
    }
}

/// Link health, cumulative over every session of a connection: what the frame decoder
/// counted (`decoder`) and what the request layer counted besides.
package struct LinkCounters: Sendable, Hashable {
    /// Bytes, frames and every frame the decoder had to drop, by reason.
    package var decoder = DecoderCounters()
    /// Links re-established after a disconnect.
    package var reconnects: UInt64 = 0
    /// Request re-sends after a timeout (same id, RETRANSMIT).
    package var retransmits: UInt64 = 0
    /// Requests that never got an answer after every retry.
    package var timeouts: UInt64 = 0
    package var nacks: UInt64 = 0
    /// Responses nobody waited for any more (a second answer to a retransmitted request).
    package var lateResponses: UInt64 = 0
    /// BOOT events seen (pod resets).
    package var podReboots: UInt64 = 0
    /// Pod resets found by the liveness probe (boot count changed, BOOT event lost).
    package var unannouncedReboots: UInt64 = 0
    /// GET_STATUS probes sent because the link fell silent or an answer put the session in doubt.
    package var livenessProbes: UInt64 = 0
    /// Streamed frames naming a side or more piezo channels than HELLO announced: dropped (§6).
    package var beyondAnnounced: UInt64 = 0

    package init() {}

    /// Valid frames received.
    package var frames: UInt64 { decoder.frames }
    /// Frames the pod sent that never arrived valid (sum of sequence gaps).
    package var droppedFrames: UInt64 { decoder.droppedFrames }
    /// Number of gaps (bursts of loss).
    package var sequenceGaps: UInt64 { decoder.sequenceGaps }
    package var crcErrors: UInt64 { decoder.crcErrors }
    /// Cut-short, oversize, unreadable, wrong-version or incompatible-flag frames, and
    /// frames beyond what HELLO announced.
    package var malformed: UInt64 {
        decoder.malformed &+ decoder.oversize &+ decoder.badVersion &+ decoder.unsupportedFlags &+ beyondAnnounced
    }
    package var unknownTypes: UInt64 { decoder.unknownTypes }
    package var outOfOrder: UInt64 { decoder.outOfOrder }
    package var bytes: UInt64 { decoder.bytes }

    /// Adds another session's counts to these.
    mutating func add(_ other: LinkCounters) {
        decoder.add(other.decoder)
        reconnects &+= other.reconnects; retransmits &+= other.retransmits; timeouts &+= other.timeouts
        nacks &+= other.nacks; lateResponses &+= other.lateResponses; podReboots &+= other.podReboots
        unannouncedReboots &+= other.unannouncedReboots; livenessProbes &+= other.livenessProbes
        beyondAnnounced &+= other.beyondAnnounced
    }
}

/// What a `PodConnection` reports, in order.
package enum LinkEvent: Sendable {
    /// Opening `endpoint` and starting the handshake.
    case connecting(endpoint: String)
    /// HELLO succeeded.
    case connected(PodInfo, endpoint: String)
    /// SET_CLOCK acknowledged: the anchor maps the pod's ticks to UTC.
    case clockSet(ClockAnchor)
    /// START_STREAM acknowledged: the link is fully up.
    case streaming(StreamMask)
    /// A streamed or event frame (never a response), with its receive time (µs, Unix epoch).
    case frame(DecodedFrame, receivedMicros: UInt64)
    /// The pod reset: the start-up is being re-run. How the hub found out is kept for the log.
    case podRebooted(RebootEvidence)
    /// The pod's status says its clock is not valid, though it did not reset (§7.5): whoever
    /// keeps its clock (the schedule service) must send SET_CLOCK again. Once per loss.
    case clockInvalid
    /// The pod answered GET_STATUS (soon after each start-up, then every `statusInterval`):
    /// what it says of itself, such as which sides' power is on, whoever switched it.
    case status(PodStatus)
    /// The pod refused a start-up request with a final status (e.g. START_STREAM answered
    /// INTERNAL_ERROR): reported once, asked again after `retryIn`, not in a loop.
    case refused(PodLinkError, retryIn: Duration)
    case disconnected(reason: TransportError)
    /// Waiting `delay` before reconnect attempt `attempt` (1-based), after `reason`.
    case retrying(attempt: Int, delay: Duration, reason: LinkFailure)
    /// The connection gave up for good (protocol version mismatch) or was stopped (nil).
    case stopped(PodLinkError?)
}

/// Why a connection attempt or a live link ended, with its cause kept typed (errno, libusb
/// code, the pod's status) so the hub can tell the user what to do without parsing text.
package enum LinkFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The device could not be opened, or went away.
    case transport(TransportError)
    /// The pod was reached but the handshake or a start-up request failed.
    case link(PodLinkError)

    /// Sorts any error a connection attempt threw.
    package init(_ error: any Error) {
        switch error {
        case let error as PodLinkError: self = .link(error)
        default: self = .transport(TransportError(error))
        }
    }

    package var description: String {
        switch self {
        case .transport(let error): error.description
        case .link(let error): error.description
        }
    }

    /// Why the link went away, as `LinkEvent.disconnected` reports it.
    package var asTransportError: TransportError {
        switch self {
        case .transport(let error), .link(.disconnected(let error)): error
        case .link(let error): .failed(.foreign(error.description))
        }
    }
}

/// How the hub learnt that the pod reset (spec §7.7): what its log and `podRebooted` say.
package enum RebootEvidence: Sendable, Hashable, CustomStringConvertible {
    /// The pod's BOOT event arrived.
    case bootEvent
    /// A request was answered NO_SESSION (v1.1), or NOT_READY by a v1.0 pod where that means no session.
    case noSession(Status)
    /// A status carried another boot count than the HELLO: a HELLO reached the reset pod unseen.
    case bootCount(from: UInt32, to: UInt32)

    package var description: String {
        switch self {
        case .bootEvent: "BOOT event"
        case .noSession(let status): status == .notReady ? "NOT_READY" : "NO_SESSION"
        case .bootCount(let from, let to): "boot count \(from) → \(to)"
        }
    }
}
