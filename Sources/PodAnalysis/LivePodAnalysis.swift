import PodProtocol
import SleepAnalysis
import SleepDomain

/// The latest vitals of one side, as a live view shows them.
public struct LiveSideVitals: Sendable, Hashable {
    /// The newest second the front end completed (Unix seconds; about `lookahead` = 8 s
    /// behind the newest samples, because its estimates use centred windows).
    public var latest: SecondVitals
    /// Mean movement index over the last `movementWindow` completed seconds (a single
    /// second's index jumps with every beat; a few seconds' mean reads steadily).
    public var movement: Double
}

/// Live analysis for `podbridge stream` (and anything else that wants the current
/// heart rate, breathing rate, movement and presence per side): the router and its
/// front ends, keeping only the newest second per side. Bounded memory, no I/O.
public struct LivePodAnalysis: Sendable {
    public private(set) var router: PodSignalRouter
    /// Seconds the movement shown is averaged over.
    public let movementWindow: Int
    private var newest: [BedSide: SecondVitals] = [:]
    private var recentMovement: [BedSide: [Double]] = [:]

    public init(frontEnd: FrontEndConfig = FrontEndConfig(), sampleRate: Int = Wire.tickRate,
                movementWindow: Int = 10) {
        router = PodSignalRouter(frontEnd: frontEnd, sampleRate: sampleRate)
        self.movementWindow = max(movementWindow, 1)
    }

    /// The hub set the pod's clock (see `PodSignalRouter.anchor(_:)`).
    public mutating func anchor(_ anchor: ClockAnchor) {
        router.anchor(anchor)
    }

    /// Feeds one message; returns what the front ends completed (for callers that also
    /// keep the seconds and beats).
    @discardableResult
    public mutating func apply(_ message: Message) -> [SideOutput] {
        let outputs = router.apply(message)
        for o in outputs { take(o) }
        return outputs
    }

    /// The pod restarted (a BOOT event the caller saw outside `apply`): its ticks restart,
    /// so nothing is placed until the next anchor.
    public mutating func podRestarted() {
        apply(.event(PodEvent(tick: 0, kind: .boot, side: nil, argument: 0)))
    }

    /// The newest vitals of a side, nil before its first completed second.
    public func vitals(for side: BedSide) -> LiveSideVitals? {
        guard let v = newest[side] else { return nil }
        let recent = recentMovement[side] ?? []
        let movement = recent.isEmpty ? v.movement : recent.reduce(0, +) / Double(recent.count)
        return LiveSideVitals(latest: v, movement: (movement * 100).rounded() / 100)
    }

    public var counters: PodSignalCounters { router.counters }

    private mutating func take(_ o: SideOutput) {
        guard let last = o.output.seconds.last else { return }
        newest[o.side] = last
        var m = recentMovement[o.side] ?? []
        for s in o.output.seconds { m.append(s.present ? s.movement : 0) }
        if m.count > movementWindow { m.removeFirst(m.count - movementWindow) }
        recentMovement[o.side] = m
    }
}
