import Foundation
import SleepDomain

/// Agreement of predicted stages with a reference scoring (polysomnography or the
/// virtual pod's ground truth), by the rule the held-out test uses: for each scored
/// reference epoch, the predicted stage at its midpoint; no prediction there is awake.
package struct StagingEvaluation: Sendable {
    /// (reference, predicted) per scored epoch.
    package var pairs: [(reference: SleepStage, predicted: SleepStage)]

    package init(pairs: [(reference: SleepStage, predicted: SleepStage)]) { self.pairs = pairs }

    package init(reference: [InputFormats.StagedInterval], predicted sessions: [SleepSession]) {
        var lookup: [Int: SleepStage] = [:]
        for s in sessions { for e in s.epochs { lookup[Int(e.start / epochLength)] = e.stage } }
        self.init(reference: reference, lookup: lookup)
    }

    /// Scored against predicted epochs as `podbridge analyze --epochs-out` writes them
    /// (`start,end,stage`, read by `InputFormats.parseStages`).
    package init(reference: [InputFormats.StagedInterval], predictedEpochs: [InputFormats.StagedInterval]) {
        var lookup: [Int: SleepStage] = [:]
        for e in predictedEpochs { if let stage = e.stage { lookup[Int((e.start / epochLength).rounded(.down))] = stage } }
        self.init(reference: reference, lookup: lookup)
    }

    private init(reference: [InputFormats.StagedInterval], lookup: [Int: SleepStage]) {
        pairs = reference.compactMap { r in
            guard let truth = r.stage else { return nil }
            let mid = (r.start + r.end) / 2
            let key = Int((mid / epochLength).rounded(.down))
            return (truth, lookup[key] ?? .awake)
        }
    }

    /// Pool several evaluations (for pooled figures over records).
    package static func pooled(_ parts: [StagingEvaluation]) -> StagingEvaluation {
        StagingEvaluation(pairs: parts.flatMap(\.pairs))
    }

    /// Class groupings: 4 stages, awake/NREM/REM, awake/sleep.
    package enum Classes: Int, Sendable, CaseIterable {
        case four = 4, three = 3, two = 2
        func label(_ s: SleepStage) -> Int {
            switch self {
            case .four: s.index
            case .three: s == .awake ? 0 : (s == .rem ? 2 : 1)
            case .two: s == .awake ? 0 : 1
            }
        }
    }

    package func confusion(_ classes: Classes) -> [[Int]] {
        let k = classes.rawValue
        var m = [[Int]](repeating: [Int](repeating: 0, count: k), count: k)
        for p in pairs { m[classes.label(p.reference)][classes.label(p.predicted)] += 1 }
        return m
    }

    package func accuracy(_ classes: Classes) -> Double {
        let m = confusion(classes)
        let n = m.joined().reduce(0, +)
        return n == 0 ? .nan : Double((0..<m.count).map { m[$0][$0] }.reduce(0, +)) / Double(n)
    }

    /// Cohen's kappa: agreement beyond chance, 0 for chance, 1 for perfect.
    package func kappa(_ classes: Classes) -> Double {
        let m = confusion(classes)
        let n = Double(m.joined().reduce(0, +))
        guard n > 0 else { return .nan }
        let k = m.count
        let po = Double((0..<k).map { m[$0][$0] }.reduce(0, +)) / n
        var pe = 0.0
        for c in 0..<k {
            let row = Double(m[c].reduce(0, +)), col = Double((0..<k).map { m[$0][c] }.reduce(0, +))
            pe += row * col / (n * n)
        }
        return pe >= 1 ? (po >= 1 ? 1 : 0) : (po - pe) / (1 - pe)
    }

    /// Predicted minus reference total sleep time over the scored epochs (minutes).
    package var totalSleepBiasMinutes: Double {
        let predicted = pairs.filter { $0.predicted != .awake }.count
        let reference = pairs.filter { $0.reference != .awake }.count
        return Double(predicted - reference) * epochLength / 60
    }

    /// Share of the scored epochs awake in the reference and as staged: whether the stager
    /// follows a night's own wake share or imposes one.
    package var referenceAwakeShare: Double { awakeShare(pairs.map(\.reference)) }
    package var stagedAwakeShare: Double { awakeShare(pairs.map(\.predicted)) }
    private func awakeShare(_ stages: [SleepStage]) -> Double {
        stages.isEmpty ? .nan : Double(stages.filter { $0 == .awake }.count) / Double(stages.count)
    }

    /// Share of reference-awake epochs predicted awake (wake sensitivity).
    package var wakeSensitivity: Double { recall(.awake) }

    /// Share of reference-asleep epochs predicted asleep (wake specificity).
    package var wakeSpecificity: Double {
        let asleep = pairs.filter { $0.reference != .awake }
        return asleep.isEmpty ? .nan : Double(asleep.filter { $0.predicted != .awake }.count) / Double(asleep.count)
    }

    /// Share of the reference epochs of `stage` predicted as that stage.
    package func recall(_ stage: SleepStage) -> Double {
        let these = pairs.filter { $0.reference == stage }
        return these.isEmpty ? .nan : Double(these.filter { $0.predicted == stage }.count) / Double(these.count)
    }
}

/// Training data from scored nights and the validation protocols (by record, by subject,
/// across datasets). Every protocol stages held-out nights through `SleepAnalyzer` from
/// the same `AnalysisInput` a user gives the command, so what is measured is what runs.
package enum StagingTraining {
    /// One scored night: the analyzer's input and the reference scoring.
    package struct Record: Sendable {
        package var name: String
        /// Nights of one person share a subject; by-subject validation keeps them together.
        package var subject: String
        /// Which database the night comes from (`slpdb`, `sleep-accel`).
        package var dataset: String
        package var input: AnalysisInput
        package var reference: [InputFormats.StagedInterval]
        package init(name: String, subject: String, dataset: String, input: AnalysisInput,
                    reference: [InputFormats.StagedInterval]) {
            self.name = name; self.subject = subject; self.dataset = dataset
            self.input = input; self.reference = reference
        }
        /// A beats-only night (ECG research data): one in-bed period over the beats.
        package init(name: String, subject: String? = nil, dataset: String = "slpdb", beats: [Double],
                    reference: [InputFormats.StagedInterval]) {
            self.init(name: name, subject: subject ?? name, dataset: dataset,
                      input: AnalysisInput(beats: beats, inBed: .wholeSpan), reference: reference)
        }
    }

    static let analyzer = SleepAnalyzer(timeZone: TimeZone(identifier: "UTC")!)

    /// Model features of the record's in-bed epochs with the reference stage of each.
    package static func labelledNight(_ record: Record) -> LabelledNight {
        var stageAt: [Int: SleepStage] = [:]
        for r in record.reference {
            if let s = r.stage { stageAt[Int((((r.start + r.end) / 2) / epochLength).rounded(.down))] = s }
        }
        let rows = analyzer.modelRows(record.input)
        return LabelledNight(features: rows.map(\.row),
                             stages: rows.map { stageAt[Int(($0.start / epochLength).rounded())] })
    }

    /// The record staged by `models` (the one for its kind), scored against its reference.
    /// `decidesWakeByNight` false takes each epoch's likeliest stage (`SleepAnalyzer`).
    package static func evaluate(_ models: StagingModels, on record: Record,
                                 decidesWakeByNight: Bool = true) -> StagingEvaluation {
        let sessions = SleepAnalyzer(models: models, timeZone: TimeZone(identifier: "UTC")!,
                                     decidesWakeByNight: decidesWakeByNight).analyze(record.input)
        return StagingEvaluation(reference: record.reference, predicted: sessions)
    }

    /// The record staged by one model, whatever its kind.
    package static func evaluate(_ model: StagingModel, on record: Record) -> StagingEvaluation {
        evaluate(StagingModels(single: model), on: record)
    }

    /// Fit on every record whose group differs, stage the group's records; per-record
    /// evaluations in input order. `group` = name: leave one record out; = subject: leave
    /// one subject out. `pooledOnly` stages every record by the pooled model, as a night with
    /// beats and movement (the pod's) is staged.
    package static func crossValidate(_ records: [Record], group: (Record) -> String,
                                     pooledOnly: Bool = false,
                                     decidesWakeByNight: Bool = true) throws -> [StagingEvaluation] {
        let nights = records.map(labelledNight)
        let groups = records.map(group)
        var out = [StagingEvaluation?](repeating: nil, count: records.count)
        for g in Set(groups) {
            let train = records.indices.filter { groups[$0] != g }.map { nights[$0] }
            var models = try StagingModels.fit(train)
            if pooledOnly { models = StagingModels(single: models.pooled) }
            for i in records.indices where groups[i] == g {
                out[i] = evaluate(models, on: records[i], decidesWakeByNight: decidesWakeByNight)
            }
        }
        return out.map { $0! }
    }

    /// Fit on `train`, stage every record of `test`.
    package static func transfer(train: [Record], test: [Record]) throws -> [StagingEvaluation] {
        let models = try StagingModels.fit(train.map(labelledNight))
        return test.map { evaluate(models, on: $0) }
    }

    /// The shipped models' fit: every record given.
    package static func fit(_ records: [Record]) throws -> StagingModels {
        try StagingModels.fit(records.map(labelledNight))
    }
}
