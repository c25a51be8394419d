import Foundation
import LabelledNights
import SleepAnalysis

/// `--held-out DIR` (repeatable): the shipped models on folders of scored nights the project
/// never saw, in either layout of Data/ (`LabelledNightFolder`), each night staged through the
/// analyzer's public inputs as the command runs it and scored by the held-out rule
/// (`StagingEvaluation`). Nothing is fitted: these are the figures issue 14 is judged by, and
/// `make heldout HELDOUT=DIR` prints them for any such folder.
func runHeldOutBench(folders: [String]) throws {
    var records: [StagingTraining.Record] = []
    var readFrom: [String: String] = [:]
    for path in folders {
        let folder = try LabelledNightFolder(URL(fileURLWithPath: path))
        print("heldout.folder \(path): \(folder.records.count) nights read, \(folder.skipped.count) skipped")
        for s in folder.skipped { print("heldout.skipped \(s)") }
        for r in folder.records {
            // A night given twice would count twice in the pooled figures.
            if let first = readFrom[r.name] { print("heldout.skipped \(r.name): already read from \(first)"); continue }
            readFrom[r.name] = path
            records.append(r)
        }
    }
    guard !records.isEmpty else {
        throw LabelledNightFolder.FolderError(description: "no scored night in \(folders.joined(separator: ", "))")
    }
    let evaluations = records.map { StagingTraining.evaluate(StagingModels.default, on: $0) }
    let parts = Array(zip(records, evaluations))
    for (r, e) in parts { print(stagingLine("heldout.\(r.name)", e)) }
    stagingSummary("heldout", parts)
    for dataset in Set(records.map(\.dataset)).sorted() where Set(records.map(\.dataset)).count > 1 {
        stagingSummary("heldout.\(dataset)", parts.filter { $0.0.dataset == dataset })
    }
    print(stagingTargetsLine("heldout", parts))
}

/// Issue 14's targets for per-night evaluations, met or not, naming the nights off by more than an hour.
func stagingTargetsLine(_ tag: String, _ parts: [(StagingTraining.Record, StagingEvaluation)]) -> String {
    let t = StagingTargets(parts.map(\.1))
    func met(_ ok: Bool) -> String { ok ? "met" : "NOT met" }
    let beyond = t.nightsBeyond.map { String(format: "%@ %+.1f", parts[$0].0.name, parts[$0].1.totalSleepBiasMinutes) }
    return String(format: "staging.%@.targets: k4 %.3f (≥ %.2f: %@), k2 %.3f (≥ %.2f: %@), mean TST bias %+.1f min (±%.0f: %@), nights beyond ±%.0f min: %d (%@)%@",
                  tag, t.kappa4, StagingTargets.minimumKappa4, met(t.kappa4Met), t.kappa2, StagingTargets.minimumKappa2,
                  met(t.kappa2Met), t.meanBias, StagingTargets.meanBiasMinutes, met(t.meanBiasMet),
                  StagingTargets.nightBiasMinutes, t.nightsBeyond.count, met(t.everyNightMet),
                  beyond.isEmpty ? "" : ": " + beyond.joined(separator: ", "))
}
