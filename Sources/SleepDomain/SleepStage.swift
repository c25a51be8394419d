/// A sleep stage of one 30-second epoch, named and numbered as Apple Health names and numbers
/// it (`HKCategoryValueSleepAnalysis`), so exports and uploads need no mapping. The model that
/// plays a night, the analyzer that stages it and the store that keeps it all use this one type.
public enum SleepStage: String, Sendable, Codable, CaseIterable, Hashable {
    case awake
    case core
    case deep
    case rem

    /// Apple Health category value: awake 2, core 3, deep 4, rem 5.
    public var healthValue: Int {
        switch self {
        case .awake: 2
        case .core: 3
        case .deep: 4
        case .rem: 5
        }
    }

    /// True for the stages that count as sleep (core, deep, REM).
    public var isSleep: Bool { self != .awake }
}

/// What one Apple Health sleep-analysis sample records: the whole in-bed span of a session,
/// or one stage. Stage blocks in the store and in exports carry this; epochs carry `SleepStage`,
/// so an epoch can never be "in bed".
public enum SleepCategory: String, Sendable, Codable, CaseIterable, Hashable {
    /// The whole in-bed span of a session (one block per session).
    case inBed = "in_bed"
    case awake
    case core
    case deep
    case rem

    public init(_ stage: SleepStage) {
        switch stage {
        case .awake: self = .awake
        case .core: self = .core
        case .deep: self = .deep
        case .rem: self = .rem
        }
    }

    /// The stage, or nil for the in-bed span.
    public var stage: SleepStage? {
        switch self {
        case .inBed: nil
        case .awake: .awake
        case .core: .core
        case .deep: .deep
        case .rem: .rem
        }
    }

    /// Apple Health category value: in_bed 0, then the stage's value.
    public var healthValue: Int { stage?.healthValue ?? 0 }
}
