import Foundation

/// Agreement of predicted stages with a reference scoring (polysomnography or the
/// virtual pod's ground truth), by the rule the held-out test uses: for each scored
/// reference epoch, the predicted stage at its midpoint; no prediction there is awake.
public struct StagingEvaluation: Sendable {
    /// (reference, predicted) per scored epoch.
    public var pairs: [(reference: SleepStage, predicted: SleepStage)]

    public init(pairs: [(reference: SleepStage, predicted: SleepStage)]) { self.pairs = pairs }

    public init(reference: [InputFormats.StagedInterval], predicted sessions: [SleepSession]) {
        var lookup: [Int: SleepStage] = [:]
        for s in sessions { for e in s.epochs { lookup[Int(e.start / epochLength)] = e.stage } }
        pairs = reference.compactMap { r in
            guard let truth = r.stage else { return nil }
            let mid = (r.start + r.end) / 2
            let key = Int((mid / epochLength).rounded(.down))
            return (truth, lookup[key] ?? .awake)
        }
    }

    /// Pool several evaluations (for pooled figures over records).
    public static func pooled(_ parts: [StagingEvaluation]) -> StagingEvaluation {
        StagingEvaluation(pairs: parts.flatMap(\.pairs))
    }

    /// Class groupings: 4 stages, awake/NREM/REM, awake/sleep.
    public enum Classes: Int, Sendable, CaseIterable {
        case four = 4, three = 3, two = 2
        func label(_ s: SleepStage) -> Int {
            switch self {
            case .four: s.index
            case .three: s == .awake ? 0 : (s == .rem ? 2 : 1)
            case .two: s == .awake ? 0 : 1
            }
        }
    }

    public func confusion(_ classes: Classes) -> [[Int]] {
        let k = classes.rawValue
        var m = [[Int]](repeating: [Int](repeating: 0, count: k), count: k)
        for p in pairs { m[classes.label(p.reference)][classes.label(p.predicted)] += 1 }
        return m
    }

    public func accuracy(_ classes: Classes) -> Double {
        let m = confusion(classes)
        let n = m.joined().reduce(0, +)
        return n == 0 ? .nan : Double((0..<m.count).map { m[$0][$0] }.reduce(0, +)) / Double(n)
    }

    /// Cohen's kappa: agreement beyond chance, 0 for chance, 1 for perfect.
    public func kappa(_ classes: Classes) -> Double {
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
    public var totalSleepBiasMinutes: Double {
        let predicted = pairs.filter { $0.predicted != .awake }.count
        let reference = pairs.filter { $0.reference != .awake }.count
        return Double(predicted - reference) * epochLength / 60
    }

    /// Share of reference-awake epochs predicted awake (wake sensitivity).
    public var wakeSensitivity: Double {
        let awake = pairs.filter { $0.reference == .awake }
        return awake.isEmpty ? .nan : Double(awake.filter { $0.predicted == .awake }.count) / Double(awake.count)
    }
}

/// Training data from scored nights and the leave-one-record-out protocol.
public enum StagingTraining {
    /// One scored record: beat times and the reference scoring.
    public struct Record: Sendable {
        public var name: String
        public var beats: [Double]
        public var reference: [InputFormats.StagedInterval]
        public init(name: String, beats: [Double], reference: [InputFormats.StagedInterval]) {
            self.name = name; self.beats = beats; self.reference = reference
        }
    }

    /// Model features of the record's beat span with the reference stage of each epoch.
    public static func labelledNight(_ record: Record) -> LabelledNight {
        let input = AnalysisInput(beats: record.beats, inBed: .wholeSpan)
        let analyzer = SleepAnalyzer(model: .default, timeZone: TimeZone(identifier: "UTC")!)
        guard let (start, count, _) = analyzer.grid(input) else { return LabelledNight(features: [], stages: []) }
        let features = EpochFeatureExtractor(timeZone: analyzer.timeZone)
            .features(gridStart: start, count: count, beats: record.beats, vitals: [])
        var stages = [SleepStage?](repeating: nil, count: count)
        for r in record.reference {
            let k = Int((((r.start + r.end) / 2 - start) / epochLength).rounded(.down))
            if k >= 0, k < count { stages[k] = r.stage }
        }
        return LabelledNight(features: StagingFeatures.matrix(features), stages: stages)
    }

    /// Fit on all records but one, stage that one; per-record evaluations in input order.
    public static func leaveOneOut(_ records: [Record],
                                   emissionWeight: Double = StagingModel.defaultEmissionWeight) throws
        -> [StagingEvaluation] {
        let nights = records.map(labelledNight)
        return try records.indices.map { test in
            let train = nights.indices.filter { $0 != test }.map { nights[$0] }
            let model = try StagingModel.fit(train, emissionWeight: emissionWeight)
            let analyzer = SleepAnalyzer(model: model, timeZone: TimeZone(identifier: "UTC")!)
            let sessions = analyzer.analyze(AnalysisInput(beats: records[test].beats, inBed: .wholeSpan))
            return StagingEvaluation(reference: records[test].reference, predicted: sessions)
        }
    }
}
