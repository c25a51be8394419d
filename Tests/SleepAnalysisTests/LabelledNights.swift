import Foundation
import LabelledNights
@testable import SleepAnalysis

/// The labelled nights in Data/, read as the bench reads them (`LabelledNightFolder`: beats
/// for slpdb-dev, a vitals CSV parsed by `InputFormats` for sleep-accel-dev).
enum LabelledNights {
    static let data = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Data")
    static let slpdbFolder = data.appendingPathComponent("slpdb-dev")
    static let sleepAccelFolder = data.appendingPathComponent("sleep-accel-dev")

    static func slpdbNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: slpdbFolder.path)
            .filter { $0.hasSuffix(".beats.csv") }.map { String($0.dropLast(".beats.csv".count)) }.sorted()
    }

    static func slpdb(_ name: String) throws -> StagingTraining.Record {
        try LabelledNightFolder.slpdbRecord(in: slpdbFolder, name: name)
    }

    static func sleepAccelIDs() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: sleepAccelFolder.path)
            .filter { $0.hasSuffix("_psg_labels.out") }.map { String($0.dropLast("_psg_labels.out".count)) }.sorted()
    }

    static func sleepAccelNight(_ id: String, withMovement: Bool = true) throws -> SleepAccelNight {
        try LabelledNightFolder.sleepAccelNight(in: sleepAccelFolder, id: id, withMovement: withMovement)
    }

    static func sleepAccel(_ id: String, withMovement: Bool = true) throws -> StagingTraining.Record {
        try LabelledNightFolder.sleepAccelRecord(in: sleepAccelFolder, id: id, withMovement: withMovement)
    }

    /// Every labelled night, slpdb-dev then sleep-accel-dev (the shipped model's training set).
    static func all() throws -> [StagingTraining.Record] {
        try LabelledNightFolder(slpdbFolder).records + LabelledNightFolder(sleepAccelFolder).records
    }
}
