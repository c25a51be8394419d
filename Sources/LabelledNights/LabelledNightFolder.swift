import Foundation
import SleepAnalysis

/// A folder of scored research nights, read as the analyzer's public inputs: the two layouts
/// of Data/ (docs/staging.md, "The labelled nights, as users give them").
///
/// - slpdb (MIT-BIH Polysomnographic Database, converted): `<record>.beats.csv` and
///   `<record>.stages.csv`; the beats become one in-bed span, as `podbridge analyze --beats`
///   reads them. Records `slpNNa` and `slpNNb` are one subject.
/// - sleep-accel (Walch et al. 2019, as PhysioNet ships it): `<id>_heartrate.txt`,
///   `_labeled_sleep.txt`, `_psg_labels.out`, `_count_feature.out`, `_time_feature.out`,
///   converted by `SleepAccelNight` into the vitals CSV `podbridge analyze --vitals` reads.
///
/// The same reader serves the shipped model's fit (Data/), the tests, and any folder of nights
/// the project never saw (`podbridge-bench --held-out DIR`), so the figures on each are taken
/// the same way. A night that cannot be read (a file missing, malformed, not lining up) is
/// skipped with its reason; the others are still read.
package struct LabelledNightFolder: Sendable {
    /// The folder's readable nights: slpdb records, then sleep-accel nights, each in name order
    /// (the order the shipped model was fitted in).
    package var records: [StagingTraining.Record]
    /// The nights that could not be read, each with what was wrong.
    package var skipped: [Skipped]

    package struct Skipped: Sendable, Equatable, CustomStringConvertible {
        /// The record's name, or the file that names no night.
        package var name: String
        package var reason: String
        package var description: String { "\(name): \(reason)" }
    }

    package struct FolderError: Error, Equatable, CustomStringConvertible {
        package var description: String
        package init(description: String) { self.description = description }
    }

    /// The files of one sleep-accel night, by suffix after `<id>_`.
    package static let sleepAccelFiles = ["heartrate.txt", "labeled_sleep.txt", "psg_labels.out",
                                          "count_feature.out", "time_feature.out"]

    /// Reads every night in `directory`. Throws only when the folder cannot be listed;
    /// a folder with no night of either layout reads as none (`records` empty).
    /// `withMovement` false reads sleep-accel nights without their movement column.
    package init(_ directory: URL, withMovement: Bool = true) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else {
            throw FolderError(description: "\(directory.path): no such folder")
        }
        guard isDirectory.boolValue else { throw FolderError(description: "\(directory.path): not a folder") }
        guard let listed = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            throw FolderError(description: "\(directory.path): cannot list the folder (permission denied?)")
        }
        let names = listed.sorted()
        var records: [StagingTraining.Record] = []
        var skipped: [Skipped] = []
        let present = Set(names)

        let slpdb = names.filter { $0.hasSuffix(".beats.csv") }.map { String($0.dropLast(".beats.csv".count)) }
        for name in slpdb {
            guard present.contains("\(name).stages.csv") else {
                skipped.append(Skipped(name: name, reason: "\(name).beats.csv has no \(name).stages.csv beside it"))
                continue
            }
            do { records.append(try Self.slpdbRecord(in: directory, name: name)) } catch {
                skipped.append(Skipped(name: name, reason: Self.reason(error)))
            }
        }
        for name in names where name.hasSuffix(".stages.csv") {
            let record = String(name.dropLast(".stages.csv".count))
            if !present.contains("\(record).beats.csv") {
                skipped.append(Skipped(name: record, reason: "\(name) has no \(record).beats.csv beside it"))
            }
        }

        let ids = Set(names.compactMap { name in
            Self.sleepAccelFiles.first { name.hasSuffix("_" + $0) }.map { String(name.dropLast($0.count + 1)) }
        }).sorted()
        for id in ids {
            let missing = Self.sleepAccelFiles.filter { !present.contains("\(id)_\($0)") }
            guard missing.isEmpty else {
                skipped.append(Skipped(name: id, reason: "missing " + missing.map { "\(id)_\($0)" }.joined(separator: ", ")))
                continue
            }
            do { records.append(try Self.sleepAccelRecord(in: directory, id: id, withMovement: withMovement)) } catch {
                skipped.append(Skipped(name: id, reason: Self.reason(error)))
            }
        }
        self.records = records
        self.skipped = skipped
    }

    /// One slpdb record: its beats as one in-bed span, its PSG stages.
    package static func slpdbRecord(in directory: URL, name: String) throws -> StagingTraining.Record {
        let beatsFile = directory.appendingPathComponent("\(name).beats.csv")
        let stagesFile = directory.appendingPathComponent("\(name).stages.csv")
        let beats = try InputFormats.parseBeats(try text(beatsFile), file: beatsFile.path)
        let stages = try InputFormats.parseStages(try text(stagesFile), file: stagesFile.path)
        return StagingTraining.Record(name: name, subject: slpdbSubject(name), beats: beats.beats, reference: stages)
    }

    /// One sleep-accel night, converted into the vitals CSV a user gives `--vitals`.
    package static func sleepAccelNight(in directory: URL, id: String, withMovement: Bool = true) throws -> SleepAccelNight {
        func file(_ suffix: String) throws -> String { try text(directory.appendingPathComponent("\(id)_\(suffix)")) }
        return try SleepAccelNight(heartRate: file("heartrate.txt"), labeledSleep: file("labeled_sleep.txt"),
                                   psgLabels: file("psg_labels.out"), countFeature: file("count_feature.out"),
                                   timeFeature: file("time_feature.out"), withMovement: withMovement)
    }

    /// One sleep-accel night as a record: the converted vitals parsed as `--vitals` parses them.
    package static func sleepAccelRecord(in directory: URL, id: String, withMovement: Bool = true) throws -> StagingTraining.Record {
        let night = try sleepAccelNight(in: directory, id: id, withMovement: withMovement)
        let vitals = try InputFormats.parseVitals(night.vitalsCSV, file: "\(id).vitals.csv")
        return StagingTraining.Record(name: "accel\(id)", subject: "accel\(id)", dataset: "sleep-accel",
                                      input: AnalysisInput(vitalsFile: vitals), reference: night.reference)
    }

    /// `slp01a` and `slp01b` are halves of one subject's night; other records are their own subject.
    package static func slpdbSubject(_ name: String) -> String {
        name.count == 6 && (name.hasSuffix("a") || name.hasSuffix("b")) ? String(name.dropLast()) : name
    }

    /// The file as UTF-8 text, or a failure naming the file and why.
    static func text(_ url: URL) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let data = FileManager.default.contents(atPath: url.path) else {
            throw FolderError(description: "\(url.lastPathComponent): cannot be read")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw FolderError(description: "\(url.lastPathComponent): not UTF-8 text")
        }
        return text
    }

    /// The analyzer's input errors and the conversion's say file, line and what is wrong.
    static func reason(_ error: Error) -> String { String(describing: error) }
}
