import Foundation
import SleepAnalysis

/// The labelled nights in Data/, read as the analyzer's public inputs.
enum StagingData {
    /// The nine slpdb-dev records (beats, apnoea patients), in name order. Records `slpNNa`
    /// and `slpNNb` are the same person.
    static func slpdb(repoRoot: URL) throws -> [StagingTraining.Record] {
        let dir = repoRoot.appendingPathComponent("Data/slpdb-dev")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".beats.csv") }.map { String($0.dropLast(".beats.csv".count)) }.sorted()
        return try names.map { name in
            let beatsFile = dir.appendingPathComponent("\(name).beats.csv")
            let stagesFile = dir.appendingPathComponent("\(name).stages.csv")
            let beats = try InputFormats.parseBeats(String(contentsOf: beatsFile, encoding: .utf8), file: beatsFile.path)
            let stages = try InputFormats.parseStages(String(contentsOf: stagesFile, encoding: .utf8), file: stagesFile.path)
            let subject = name.count == 6 && (name.hasSuffix("a") || name.hasSuffix("b")) ? String(name.dropLast()) : name
            return StagingTraining.Record(name: name, subject: subject, beats: beats.beats, reference: stages)
        }
    }

    /// The 21 sleep-accel-dev nights (heart rate and movement, healthy sleepers), in id order,
    /// converted to vitals CSV text and parsed by `InputFormats.parseVitals`, as `--vitals` would.
    static func sleepAccel(repoRoot: URL, withMovement: Bool = true) throws -> [StagingTraining.Record] {
        let dir = repoRoot.appendingPathComponent("Data/sleep-accel-dev")
        let ids = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix("_psg_labels.out") }.map { String($0.dropLast("_psg_labels.out".count)) }
            .sorted()
        return try ids.map { id in
            func text(_ suffix: String) throws -> String {
                try String(contentsOf: dir.appendingPathComponent("\(id)_\(suffix)"), encoding: .utf8)
            }
            let night = try SleepAccelNight(heartRate: text("heartrate.txt"), labeledSleep: text("labeled_sleep.txt"),
                                            psgLabels: text("psg_labels.out"), countFeature: text("count_feature.out"),
                                            timeFeature: text("time_feature.out"), withMovement: withMovement)
            let vitals = try InputFormats.parseVitals(night.vitalsCSV, file: "\(id).vitals.csv")
            return StagingTraining.Record(name: "accel\(id)", subject: "accel\(id)", dataset: "sleep-accel",
                                          input: AnalysisInput(vitalsFile: vitals), reference: night.reference)
        }
    }
}
