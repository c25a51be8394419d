// Values shared by the session (one open link) and the connection (the link across
// unplugs): timing, errors, counters and the events the rest of the hub sees.
import PodProtocol

/// Timeouts, retries and backoff. Defaults are the spec's (firmware-protocol.md §7.2);
/// tests inject short ones.
public struct LinkTiming: Sendable, Hashable {
    /// How long to wait for a response before re-sending (spec: 500 ms).
    public var responseTimeout: Duration
    /// Re-sends after the first attempt, same request id, RETRANSMIT flag (spec: 3).
    public var retries: Int
    /// Wait before re-asking after a BUSY nack (spec: 100 ms), with a fresh request id.
    public var busyDelay: Duration
    /// First reconnect delay; doubles per failed attempt up to `reconnectMaxDelay`.
    public var reconnectInitialDelay: Duration
    public var reconnectMaxDelay: Duration
    /// Each delay is scaled by a random factor in 1 ± jitter, so many hubs (or a hub and
    /// a flapping pod) do not fall into lock-step.
    public var jitter: Double

    public init(responseTimeout: Duration = .milliseconds(500), retries: Int = 3, busyDelay: Duration = .milliseconds(100),
                reconnectInitialDelay: Duration = .milliseconds(500), reconnectMaxDelay: Duration = .seconds(30),
                jitter: Double = 0.2) {
        self.responseTimeout = responseTimeout
        self.retries = retries
        self.busyDelay = busyDelay
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaxDelay = reconnectMaxDelay
        self.jitter = jitter
    }

    /// The delay before reconnect attempt `attempt` (0-based): capped exponential, jittered.
    public func reconnectDelay(attempt: Int, random: Double) -> Duration {
        let base = reconnectInitialDelay * Double(1 << min(attempt, 20))
        let capped = min(base, reconnectMaxDelay)
        let factor = 1 + jitter * (2 * min(max(random, 0), 1) - 1)
        return capped * factor
    }
}

/// What can go wrong talking to a pod, in words a user can act on.
public enum PodLinkError: Error, Equatable, Sendable, CustomStringConvertible {
    /// HELLO found no common protocol version: the pod needs other firmware (or the hub an update).
    case protocolVersionMismatch(hub: ClosedRange<UInt8>, pod: String)
    /// The pod refused a request; it changed nothing (spec §6.1).
    case nack(request: MessageType, status: Status)
    /// No response after the first attempt and all retries.
    case timeout(request: MessageType, attempts: Int)
    /// A response arrived under the request's id with another type or body.
    case unexpectedResponse(request: MessageType, detail: String)
    /// The link went away while the request was outstanding.
    case disconnected(String)
    /// No pod is connected right now.
    case notConnected
    /// A pod with another serial answered where we expected a known one.
    case wrongPod(expected: String, found: String)

    public var description: String {
        switch self {
        case .protocolVersionMismatch(let hub, let pod):
            "protocol version mismatch: this hub speaks v\(hub.lowerBound)–v\(hub.upperBound), the pod \(pod); update the pod firmware or podbridge"
        case .nack(let request, let status): "pod refused \(request): \(status) (status \(status.rawValue))"
        case .timeout(let request, let attempts): "no response to \(request) after \(attempts) attempts"
        case .unexpectedResponse(let request, let detail): "unexpected response to \(request): \(detail)"
        case .disconnected(let why): "disconnected: \(why)"
        case .notConnected: "no pod connected"
        case .wrongPod(let expected, let found): "expected pod \(expected), found \(found)"
        }
    }
}

/// Link health, cumulative over every session of a connection.
public struct LinkCounters: Sendable, Hashable {
    /// Valid frames received.
    public var frames: UInt64 = 0
    /// Frames the pod sent that never arrived valid (sum of sequence gaps).
    public var droppedFrames: UInt64 = 0
    /// Number of gaps (bursts of loss).
    public var sequenceGaps: UInt64 = 0
    public var crcErrors: UInt64 = 0
    /// Cut-short, oversize or unreadable frames and payloads (garbage on the line).
    public var malformed: UInt64 = 0
    public var unknownTypes: UInt64 = 0
    public var outOfOrder: UInt64 = 0
    public var bytes: UInt64 = 0
    /// Links re-established after a disconnect.
    public var reconnects: UInt64 = 0
    /// Request re-sends after a timeout, and requests that never got an answer.
    public var retransmits: UInt64 = 0
    public var timeouts: UInt64 = 0
    public var nacks: UInt64 = 0
    /// Responses nobody waited for any more (answers to a request already retried).
    public var lateResponses: UInt64 = 0
    /// BOOT events seen (pod resets).
    public var podReboots: UInt64 = 0

    public init() {}

    mutating func add(_ d: DecoderCounters) {
        frames &+= d.frames
        droppedFrames &+= d.droppedFrames
        sequenceGaps &+= d.sequenceGaps
        crcErrors &+= d.crcErrors
        malformed &+= d.malformed &+ d.oversize &+ d.badVersion &+ d.unsupportedFlags
        unknownTypes &+= d.unknownTypes
        outOfOrder &+= d.outOfOrder
        bytes &+= d.bytes
    }
}

/// What a `PodConnection` reports, in order.
public enum LinkEvent: Sendable {
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
    /// The pod reset (BOOT event or a new boot count): the start-up is being re-run.
    case podRebooted
    case disconnected(reason: String)
    /// Waiting `delay` before reconnect attempt `attempt` (1-based).
    case retrying(attempt: Int, delay: Duration, reason: String)
    /// The connection gave up for good (protocol version mismatch) or was stopped (nil).
    case stopped(PodLinkError?)
}
