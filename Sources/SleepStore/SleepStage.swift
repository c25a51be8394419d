/// Sleep stage names and values exactly as Apple Health uses them
/// (`HKCategoryValueSleepAnalysis`), so exports and uploads need no mapping.
public enum SleepStage: String, Sendable, Codable, CaseIterable, Hashable {
    /// The whole in-bed span of a session (one block per session, never an epoch stage).
    case inBed = "in_bed"
    case awake
    case core
    case deep
    case rem

    /// Apple Health category value: in_bed 0, awake 2, core 3, deep 4, rem 5.
    public var healthValue: Int {
        switch self {
        case .inBed: 0
        case .awake: 2
        case .core: 3
        case .deep: 4
        case .rem: 5
        }
    }

    /// The stages a 30-second epoch may carry (everything but `in_bed`).
    public static let epochStages: [SleepStage] = [.awake, .core, .deep, .rem]

    /// True for the stages that count as sleep (core, deep, REM).
    public var isSleep: Bool { self == .core || self == .deep || self == .rem }
}

/// Which half of the bed a record belongs to.
public enum BedSide: String, Sendable, Codable, CaseIterable, Hashable {
    case left
    case right
}
