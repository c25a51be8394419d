import NightModel
import PodProtocol
import SystemCalls

/// Everything a virtual pod needs to know before it starts.
package struct VirtualPodConfiguration: Sendable {
    package var identity: PodIdentity
    /// The night the physiology model plays (seed, length, sleepers, noise, pump).
    /// `channelsPerSide` and the number of sides follow `identity`.
    package var night: NightConfig
    /// Simulated seconds per real second (1 = real time, 60 = a night in 8 minutes).
    package var speed: Double
    /// Unix time of model time 0 (the pod's first tick), used to write ground truth when the
    /// hub never set the clock and offered as `simulatedUnixTime` to hubs that want to set
    /// the pod's clock to the simulated night rather than to their wall clock.
    package var nightStartUnix: Double
    /// Replay these captured frames instead of playing the model (nil: play the model).
    package var replay: [Capture.Record]?
    /// Faults at given moments of the simulated night.
    package var faults: [ScheduledFault]
    /// A symlink kept pointing at the current tty across replugs (e.g. "/tmp/pod0").
    package var linkPath: String?
    /// Stop by itself when the night (or the replay) ends.
    package var stopsAtEnd: Bool
    /// Bytes the pod queues while the hub does not read; beyond it frames are dropped and
    /// counted in `tx_dropped`, like a firmware transmit queue that overflows.
    package var transmitQueueLimit: Int
    /// The reset reason of the BOOT event sent at start.
    package var startReason: ResetReason
    /// Called on the pod's thread with the tty path at start and after each replug.
    package var onAttach: (@Sendable (String) -> Void)?
    /// Time shared with an in-process hub (`HubClock(timeline:)`): the pod plays on its
    /// running time and holds it while the hub leaves more than `PodEngine.holdAbove` bytes
    /// unread, instead of running on and dropping frames. Nil: the pod paces itself on the
    /// wall clock, as a real pod does.
    package var timeline: PacedTimeline?

    package init(identity: PodIdentity = PodIdentity(), night: NightConfig = NightConfig(), speed: Double = 1,
                nightStartUnix: Double = 0, replay: [Capture.Record]? = nil, faults: [ScheduledFault] = [],
                linkPath: String? = nil, stopsAtEnd: Bool = true, transmitQueueLimit: Int = 1 << 20,
                startReason: ResetReason = .powerOn, onAttach: (@Sendable (String) -> Void)? = nil,
                timeline: PacedTimeline? = nil) {
        self.identity = identity
        self.night = night
        self.speed = speed
        self.nightStartUnix = nightStartUnix
        self.replay = replay
        self.faults = faults
        self.linkPath = linkPath
        self.stopsAtEnd = stopsAtEnd
        self.transmitQueueLimit = transmitQueueLimit
        self.startReason = startReason
        self.onAttach = onAttach
        self.timeline = timeline
    }

    /// Checks the values a user can get wrong; the message says which and why.
    package func validate() throws(ConfigurationError) {
        guard PodIdentity.isValidSerial(identity.serial) else {
            throw ConfigurationError("serial must be 1–32 printable ASCII characters")
        }
        guard (1...2).contains(identity.sides) else { throw ConfigurationError("sides must be 1 or 2") }
        guard (1...2).contains(identity.channelsPerSide) else { throw ConfigurationError("channels per side must be 1 or 2") }
        guard speed.isFinite, speed > 0, speed <= 10_000 else { throw ConfigurationError("speed must be in (0, 10000]") }
        guard night.duration.isFinite, night.duration > 0 else { throw ConfigurationError("duration must be positive") }
        guard nightStartUnix.isFinite else { throw ConfigurationError("night start must be a finite time") }
        guard transmitQueueLimit >= 4096 else { throw ConfigurationError("transmit queue must hold at least 4096 bytes") }
    }

    package struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }
}
