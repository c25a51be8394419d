import Foundation
@testable import SleepAnalysis

/// The labelled nights in Data/, read as the bench reads them (the analyzer's public
/// inputs: beats for slpdb-dev, a vitals CSV parsed by `InputFormats` for sleep-accel-dev).
enum LabelledNights {
    static let data = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Data")

    static func slpdbNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("slpdb-dev").path)
            .filter { $0.hasSuffix(".beats.csv") }.map { String($0.dropLast(".beats.csv".count)) }.sorted()
    }

    static func slpdb(_ name: String) throws -> StagingTraining.Record {
        let dir = data.appendingPathComponent("slpdb-dev")
        let b = dir.appendingPathComponent("\(name).beats.csv"), s = dir.appendingPathComponent("\(name).stages.csv")
        let subject = name.count == 6 && (name.hasSuffix("a") || name.hasSuffix("b")) ? String(name.dropLast()) : name
        return StagingTraining.Record(
            name: name, subject: subject,
            beats: try InputFormats.parseBeats(String(contentsOf: b, encoding: .utf8), file: b.path).beats,
            reference: try InputFormats.parseStages(String(contentsOf: s, encoding: .utf8), file: s.path))
    }

    static func sleepAccelIDs() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: data.appendingPathComponent("sleep-accel-dev").path)
            .filter { $0.hasSuffix("_psg_labels.out") }.map { String($0.dropLast("_psg_labels.out".count)) }.sorted()
    }

    static func sleepAccelNight(_ id: String, withMovement: Bool = true) throws -> SleepAccelNight {
        let dir = data.appendingPathComponent("sleep-accel-dev")
        func text(_ suffix: String) throws -> String {
            try String(contentsOf: dir.appendingPathComponent("\(id)_\(suffix)"), encoding: .utf8)
        }
        return try SleepAccelNight(heartRate: text("heartrate.txt"), labeledSleep: text("labeled_sleep.txt"),
                                   psgLabels: text("psg_labels.out"), countFeature: text("count_feature.out"),
                                   timeFeature: text("time_feature.out"), withMovement: withMovement)
    }

    static func sleepAccel(_ id: String, withMovement: Bool = true) throws -> StagingTraining.Record {
        let night = try sleepAccelNight(id, withMovement: withMovement)
        let vitals = try InputFormats.parseVitals(night.vitalsCSV, file: "\(id).vitals.csv")
        return StagingTraining.Record(name: "accel\(id)", subject: "accel\(id)", dataset: "sleep-accel",
                                      input: AnalysisInput(vitalsFile: vitals), reference: night.reference)
    }

    /// Every labelled night, slpdb-dev then sleep-accel-dev (the shipped model's training set).
    static func all() throws -> [StagingTraining.Record] {
        try slpdbNames().map(slpdb) + sleepAccelIDs().map { try sleepAccel($0) }
    }
}
