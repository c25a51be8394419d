import SleepDomain
/// How a simulated sleeper answers the pod's alarm, so smart wake can be measured: up a few
/// minutes after an alarm that finds them in light sleep or awake, later from REM, and later
/// still from deep sleep (sleep inertia). Minutes are drawn uniformly from each range.
public struct AlarmResponse: Sendable, Hashable, Codable {
    public var lightOrAwakeMinutes: ClosedRange<Double> = 1...4
    public var remMinutes: ClosedRange<Double> = 2...6
    public var deepMinutes: ClosedRange<Double> = 6...12
    /// Alarms slept through before one gets the sleeper up (they stay in bed, asleep on the
    /// same course); the "until out of bed" repeats exist for this sleeper.
    public var ignoredAlarms: Int = 0

    public init(lightOrAwakeMinutes: ClosedRange<Double> = 1...4, remMinutes: ClosedRange<Double> = 2...6,
                deepMinutes: ClosedRange<Double> = 6...12, ignoredAlarms: Int = 0) {
        self.lightOrAwakeMinutes = lightOrAwakeMinutes
        self.remMinutes = remMinutes
        self.deepMinutes = deepMinutes
        self.ignoredAlarms = ignoredAlarms
    }

    func minutes(after stage: SleepStage) -> ClosedRange<Double> {
        switch stage {
        case .awake, .core: lightOrAwakeMinutes
        case .rem: remMinutes
        case .deep: deepMinutes
        }
    }
}

/// One alarm the sleeper heard, for the truth files: the stage it found them in and when they
/// got out of bed because of it (nil: slept through it, or nobody was in bed).
public struct AlarmReaction: Sendable, Hashable, Codable {
    public var side: Int
    /// Model seconds.
    public var heardAt: Double
    /// The true stage at that second; nil when the side was empty.
    public var stage: SleepStage?
    /// Model seconds; nil when the sleeper stayed in bed.
    public var gotUpAt: Double?

    public init(side: Int, heardAt: Double, stage: SleepStage?, gotUpAt: Double?) {
        self.side = side
        self.heardAt = heardAt
        self.stage = stage
        self.gotUpAt = gotUpAt
    }
}

extension SidePlan {
    /// This side's plan after an alarm at second `alarm` that gets the sleeper out of bed at
    /// second `up`: awake (in bed) from the alarm, out of bed from `up` to the end of that
    /// stay; a startle at the alarm and the big movement of getting out before `up`; no
    /// beats, breathing or movement of the old plan after `up` in that stay.
    func wokenByAlarm(at alarm: Int, getsUpAt up: Int, rng: inout SplitMix64) -> SidePlan {
        var p = self
        guard let stay = inBed.first(where: { $0.start <= alarm && alarm < $0.end }), up > alarm else { return p }
        let out = min(up, stay.end)
        for s in alarm..<out { p.stages[s] = .awake }
        for s in out..<stay.end {
            p.stages[s] = nil
            p.present[s] = false
            p.respirationAmplitude[s] = 0
            p.heartRate[s] = nil
            p.breathingRate[s] = nil
        }
        p.inBed = inBed.flatMap { run -> [(start: Int, end: Int)] in
            run.start == stay.start ? [(run.start, out)] : [run]
        }
        let keep = beats.indices.filter { !(beats[$0] >= Double(out) && beats[$0] < Double(stay.end)) }
        p.beats = keep.map { beats[$0] }
        p.beatAmplitude = keep.map { beatAmplitude[$0] }
        var moves = movements.filter { !($0.start >= Double(out) - 8 && $0.start < Double(stay.end)) }
        func burst(at t: Double, big: Bool) {
            let dur = big ? rng.uniform(6, 14) : rng.uniform(2, 6)
            let amp = profile.bcgAmplitude * (big ? rng.uniform(5, 10) : rng.uniform(2, 6))
            var comps: [(Double, Double, Double)] = []
            for _ in 0..<3 { comps.append((rng.uniform(0.3, 6), rng.uniform(0, 2 * .pi), rng.uniform(0.4, 1))) }
            moves.append(MovementBurst(start: t, duration: dur, amplitude: amp, components: comps))
        }
        burst(at: Double(alarm) + rng.uniform(2, 10), big: false)
        burst(at: Double(out) - 6, big: true)
        moves.sort { $0.start < $1.start }
        p.movements = moves
        p.movementStarts = moves.map(\.start)
        var moving = [Bool](repeating: false, count: duration)
        for m in moves {
            let a = max(0, Int(m.start.rounded(.down))), b = min(duration, Int(m.end.rounded(.up)))
            if a < b { for i in a..<b { moving[i] = true } }
        }
        p.moving = moving
        return p
    }
}
