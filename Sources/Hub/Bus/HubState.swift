import Foundation
import SleepDomain
import PodDevice
import PodProtocol
import SleepAnalysis

/// What the hub knows now, folded from its events: the read side for the API (`/pods`,
/// `/live`, `/readyz`) and MQTT's retained states. Pure: `apply` is the only way it changes,
/// and `HubBus` applies every event it publishes.
package struct HubState: Sendable, Hashable {
    /// Every pod seen since the hub started, by serial.
    package var pods: [String: PodState] = [:]
    /// What keeps the hub from using the pod it found, while it lasts (`/readyz`, `/pods`):
    /// without it a pod plugged in but refused read as a pod never plugged in.
    package var linkProblem: LinkProblem?

    package struct LinkProblem: Sendable, Hashable {
        package var detail: String
        /// When it began (the hub's clock).
        package var since: Date
    }

    package init() {}

    package struct PodState: Sendable, Hashable {
        package var pod: PodSummary
        package var connected: Bool
        /// When the link came up (if connected) or went down (if not), on the hub's clock.
        package var since: Date
        /// Where it was last opened (tty path or USB node).
        package var endpoint: String
        package var lastDisconnectReason: String?
        package var counters = LinkStats()
        /// The clock anchor in force: nil until SET_CLOCK was acknowledged on this link.
        package var clock: ClockAnchor?
        /// The newest second per side (data time).
        package var live: [BedSide: LiveSecond] = [:]
        /// Whether someone is in bed, per side, as the session tracker decided.
        package var inBed: [BedSide: Bool] = [:]
        /// The newest preliminary stage per side while a night is under way.
        package var stage: [BedSide: SleepStage] = [:]
        /// Whether the side's power is on: as the pod last acknowledged to a power command or
        /// reported in its status, whichever came later.
        package var power: [BedSide: Bool] = [:]
    }

    /// The pods connected now, by serial.
    package var connectedSerials: [String] { pods.values.filter(\.connected).map(\.pod.serial).sorted() }

    package mutating func apply(_ event: HubEvent) {
        switch event {
        case .podConnected(let pod, let endpoint, let at):
            var state = pods[pod.serial] ?? PodState(pod: pod, connected: true, since: at, endpoint: endpoint)
            state.pod = pod
            state.connected = true
            state.since = at
            state.endpoint = endpoint
            state.lastDisconnectReason = nil
            state.clock = nil
            pods[pod.serial] = state
            linkProblem = nil
        case .podDisconnected(let serial, let reason, let at):
            guard pods[serial] != nil else { return }
            pods[serial]?.connected = false
            pods[serial]?.since = at
            pods[serial]?.lastDisconnectReason = reason
            pods[serial]?.clock = nil
        case .linkProblem(let detail, let at):
            linkProblem = detail.map { LinkProblem(detail: $0, since: at) }
        case .clockSet(let serial, let anchor):
            pods[serial]?.clock = anchor
        case .linkCounters(let serial, let counters):
            pods[serial]?.counters = counters
        case .live(let serial, let side, let second):
            pods[serial]?.live[side] = second
        case .presence(let serial, let side, let inBed, _):
            pods[serial]?.inBed[side] = inBed
            if !inBed { pods[serial]?.stage[side] = nil }
        case .preliminaryStage(let serial, let side, let stage, _):
            pods[serial]?.stage[side] = stage
        case .powerSet(let serial, let side, let on, _), .powerReported(let serial, let side, let on):
            pods[serial]?.power[side] = on
        case .alarm, .schedulePushed, .scheduleAcknowledged, .nightFinished, .wake, .presencePower, .presencePowerSettings, .wakeSettings:
            break
        }
    }
}
