/// Posterior probability of each stage for one epoch (each in 0…1, together 1).
public struct StageProbabilities: Sendable, Codable, Hashable {
    public var awake: Double
    public var core: Double
    public var deep: Double
    public var rem: Double

    public init(awake: Double, core: Double, deep: Double, rem: Double) {
        self.awake = awake; self.core = core; self.deep = deep; self.rem = rem
    }

    /// Probabilities in `SleepStage.allCases` order.
    public init(_ values: [Double]) {
        self.init(awake: values[0], core: values[1], deep: values[2], rem: values[3])
    }

    public subscript(stage: SleepStage) -> Double {
        switch stage {
        case .awake: awake
        case .core: core
        case .deep: deep
        case .rem: rem
        }
    }

    /// The stage with the highest probability (ties go to the earlier stage, awake first).
    public var mostLikely: SleepStage { mostLikely(among: SleepStage.allCases) }

    /// The likeliest of `stages` (not empty; ties go to the one listed first).
    public func mostLikely(among stages: [SleepStage]) -> SleepStage {
        var best = stages[0]
        for stage in stages.dropFirst() where self[stage] > self[best] { best = stage }
        return best
    }

    /// Certain of one stage (used for epochs out of bed, which are awake by definition).
    public static func certain(_ stage: SleepStage) -> StageProbabilities {
        StageProbabilities(SleepStage.allCases.map { $0 == stage ? 1 : 0 })
    }
}
