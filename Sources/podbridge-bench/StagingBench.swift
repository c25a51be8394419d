import Foundation
import SleepAnalysis

/// Staging accuracy on slpdb-dev (real PSG-scored nights), leave-one-record-out, and
/// staging speed. LOO refits the model on eight records and stages the ninth, so no
/// record is scored by a model that saw it.
func runStagingBench(options: BenchOptions) throws {
    let records = try loadSlpdbDev(repoRoot: options.repoRoot)
    let evaluations = try StagingTraining.leaveOneOut(records)
    func line(_ name: String, _ e: StagingEvaluation) -> String {
        String(format: "staging.slpdb.%@: acc4 %.3f k4 %.3f acc3 %.3f k3 %.3f acc2 %.3f k2 %.3f tst_bias %+.1f min wake_sens %.3f epochs %d",
               name, e.accuracy(.four), e.kappa(.four), e.accuracy(.three), e.kappa(.three),
               e.accuracy(.two), e.kappa(.two), e.totalSleepBiasMinutes, e.wakeSensitivity, e.pairs.count)
    }
    for (r, e) in zip(records, evaluations) { print(line(r.name, e)) }
    let pooled = StagingEvaluation.pooled(evaluations)
    print(line("pooled_loo", pooled) + " (tst_bias here is the sum over records)")
    print(String(format: "staging.slpdb.loo_kappa4: %.3f", pooled.kappa(.four)))
    print(String(format: "staging.slpdb.loo_kappa3: %.3f", pooled.kappa(.three)))
    print(String(format: "staging.slpdb.loo_kappa2: %.3f", pooled.kappa(.two)))
    print(String(format: "staging.slpdb.loo_tst_bias: %+.1f min (mean per record)",
                 pooled.totalSleepBiasMinutes / Double(records.count)))
    let cm = pooled.confusion(.four)
    print("staging.slpdb.confusion4 (rows reference awake/core/deep/rem, cols predicted): \(cm)")

    // Speed: the whole pipeline (features, normalisation, forward–backward, metrics) on
    // the longest record, repeated.
    guard let longest = records.max(by: { $0.beats.count < $1.beats.count }) else { return }
    let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)
    let repeats = options.quick ? 3 : 20
    let clock = ContinuousClock()
    var epochs = 0
    let elapsed = clock.measure {
        for _ in 0..<repeats {
            epochs += analyzer.analyze(beats: longest.beats, vitals: []).reduce(0) { $0 + $1.epochs.count }
        }
    }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    let hours = Double(epochs) * 30 / 3600
    print(String(format: "staging.speed.night: %.1f ms per %.1f-h night (%d beats)",
                 seconds / Double(repeats) * 1000, hours / Double(repeats), longest.beats.count))
    print(String(format: "staging.speed.per_hour: %.2f ms per hour of beats", seconds * 1000 / hours))
}

/// The nine slpdb-dev records, in name order.
func loadSlpdbDev(repoRoot: URL) throws -> [StagingTraining.Record] {
    let dir = repoRoot.appendingPathComponent("Data/slpdb-dev")
    let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        .filter { $0.hasSuffix(".beats.csv") }.map { String($0.dropLast(".beats.csv".count)) }.sorted()
    return try names.map { name in
        let beatsFile = dir.appendingPathComponent("\(name).beats.csv")
        let stagesFile = dir.appendingPathComponent("\(name).stages.csv")
        let beats = try InputFormats.parseBeats(String(contentsOf: beatsFile, encoding: .utf8), file: beatsFile.path)
        let stages = try InputFormats.parseStages(String(contentsOf: stagesFile, encoding: .utf8), file: stagesFile.path)
        return StagingTraining.Record(name: name, beats: beats.beats, reference: stages)
    }
}
