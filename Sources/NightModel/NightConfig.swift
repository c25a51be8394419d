/// What night the simulator plays: who lies where, how noisy the sensor is, whether the
/// pump runs. Everything the model draws at random comes from `seed`, so one config is
/// one night, bit for bit.

/// How much sensor noise the piezo channels carry (white plus in-band coloured noise).
package enum NoiseLevel: String, Sendable, Codable, CaseIterable, Hashable {
    case low, normal, high
}

/// A sleeper's physiology. Defaults are a healthy adult; stage effects are added on top.
package struct SleeperProfile: Sendable, Hashable, Codable {
    /// Heart rate in light (core) sleep early in the night, beats per minute.
    package var restingHeartRate: Double
    /// Breathing rate in light sleep, breaths per minute.
    package var breathingRate: Double
    /// Scales beat-to-beat variability (respiratory sinus arrhythmia and jitter); 1 = typical.
    package var hrvScale: Double
    /// Ballistocardiogram J-wave amplitude in counts on channel 0.
    package var bcgAmplitude: Double
    /// Respiration amplitude (half peak-to-peak) in counts on channel 0.
    package var respirationAmplitude: Double
    /// Seconds after the start of the night when the sleeper gets into bed; nil = drawn (3–10 min).
    package var getsIn: Double?
    /// Seconds before the end of the night when the sleeper gets out; nil = drawn (3–10 min).
    package var getsOutBeforeEnd: Double?
    /// Minutes awake in bed before falling asleep; nil = drawn (6–25 min).
    package var sleepOnsetLatency: Double?
    /// Whether the sleeper leaves the bed once mid-night; nil = drawn (half of nights).
    package var bathroomTrip: Bool?
    /// How they answer the pod's alarm; nil = `AlarmResponse()` defaults.
    package var alarmResponse: AlarmResponse?
    /// Seconds after the start of the night when the sleeper gets up (awake in bed for the
    /// minute before) and leaves the bed for five minutes, coming back awake for a minute;
    /// nil = only the drawn trip, if any. For tests that need a trip at a known moment.
    package var leavesBedAt: Double?

    package init(restingHeartRate: Double = 58, breathingRate: Double = 14, hrvScale: Double = 1,
                bcgAmplitude: Double = 60_000, respirationAmplitude: Double = 90_000,
                getsIn: Double? = nil, getsOutBeforeEnd: Double? = nil,
                sleepOnsetLatency: Double? = nil, bathroomTrip: Bool? = nil, alarmResponse: AlarmResponse? = nil,
                leavesBedAt: Double? = nil) {
        self.restingHeartRate = restingHeartRate
        self.breathingRate = breathingRate
        self.hrvScale = hrvScale
        self.bcgAmplitude = bcgAmplitude
        self.respirationAmplitude = respirationAmplitude
        self.getsIn = getsIn
        self.getsOutBeforeEnd = getsOutBeforeEnd
        self.sleepOnsetLatency = sleepOnsetLatency
        self.bathroomTrip = bathroomTrip
        self.alarmResponse = alarmResponse
        self.leavesBedAt = leavesBedAt
    }
}

/// One side of the bed: empty, or occupied by a sleeper.
package struct SideConfig: Sendable, Hashable, Codable {
    package var occupied: Bool
    package var sleeper: SleeperProfile

    package init(occupied: Bool = true, sleeper: SleeperProfile = SleeperProfile()) {
        self.occupied = occupied
        self.sleeper = sleeper
    }

    package static let empty = SideConfig(occupied: false)
}

/// A whole night for the simulator.
package struct NightConfig: Sendable, Hashable, Codable {
    package var seed: UInt64
    /// Length of the night in seconds (model time runs from 0 to `duration`).
    package var duration: Double
    /// Left then right (index 0 and 1); one or two sides.
    package var sides: [SideConfig]
    package var noise: NoiseLevel
    /// Whether the water pump runs in bursts through the night, shaking the whole bed.
    package var pumpVibration: Bool
    /// Piezo channels per side: 1 or 2 (other values are clamped to this range).
    package var channelsPerSide: Int
    /// Piezo samples per second per channel.
    package var sampleRate: Double
    /// Capacitance readings per second per side.
    package var capacitanceRate: Double
    /// Fraction of one side's body signal that the mattress couples into the other side.
    package var partnerCoupling: Double

    package init(seed: UInt64 = 1, duration: Double = 8 * 3600,
                sides: [SideConfig] = [SideConfig(), SideConfig()],
                noise: NoiseLevel = .normal, pumpVibration: Bool = true,
                channelsPerSide: Int = 2, sampleRate: Double = 500, capacitanceRate: Double = 2,
                partnerCoupling: Double = 0.08) {
        self.seed = seed
        self.duration = duration
        self.sides = sides
        self.noise = noise
        self.pumpVibration = pumpVibration
        self.channelsPerSide = channelsPerSide
        self.sampleRate = sampleRate
        self.capacitanceRate = capacitanceRate
        self.partnerCoupling = partnerCoupling
    }
}
