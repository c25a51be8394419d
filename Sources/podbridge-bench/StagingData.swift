import Foundation
import LabelledNights
import SleepAnalysis

/// The labelled nights in Data/, read as the analyzer's public inputs (`LabelledNightFolder`).
enum StagingData {
    /// The nine slpdb-dev records (beats, apnoea patients), in name order. Records `slpNNa`
    /// and `slpNNb` are the same person.
    static func slpdb(repoRoot: URL) throws -> [StagingTraining.Record] {
        try folder(repoRoot.appendingPathComponent("Data/slpdb-dev"))
    }

    /// The 21 sleep-accel-dev nights (heart rate and movement, healthy sleepers), in id order,
    /// converted to vitals CSV text and parsed by `InputFormats.parseVitals`, as `--vitals` would.
    static func sleepAccel(repoRoot: URL, withMovement: Bool = true) throws -> [StagingTraining.Record] {
        try folder(repoRoot.appendingPathComponent("Data/sleep-accel-dev"), withMovement: withMovement)
    }

    /// Every night of a folder of Data/; one that cannot be read fails the bench (Data/ is ours).
    static func folder(_ directory: URL, withMovement: Bool = true) throws -> [StagingTraining.Record] {
        let folder = try LabelledNightFolder(directory, withMovement: withMovement)
        if let bad = folder.skipped.first { throw LabelledNightFolder.FolderError(description: bad.description) }
        return folder.records
    }
}
