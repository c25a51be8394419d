import Foundation
import SleepDomain

/// One continuous stay in bed, staged.
package struct SleepSession: Sendable, Codable, Hashable {
    /// Unix seconds of the session's first epoch start and last epoch end. Epochs without data
    /// inside it (the link was down) are left out of `epochs`, so they need not tile the span.
    package var start: Double
    package var end: Double
    /// The local date the session ends on: a night belongs to its wake date
    /// (`LocalCalendar.wakeDate`, the rule the store uses too).
    package var wakeDate: CalendarDay
    /// Time-zone identifier the clock features and wake date were computed in.
    package var timeZone: String
    /// False for preliminary (live, forward-only) stages, true once the session has ended.
    package var isFinal: Bool
    package var epochs: [Epoch]
    package var metrics: SessionMetrics

    /// `isFinal` keeps its JSON key `final` (the `analyze --json` output is unchanged).
    enum CodingKeys: String, CodingKey {
        case start, end, wakeDate, timeZone, isFinal = "final", epochs, metrics
    }
}

/// What the analyzer reads: beat times and/or per-second vitals, plus optional series
/// that come at their own pace.
package struct AnalysisInput: Sendable {
    /// Heartbeat times, Unix seconds, ascending.
    package var beats: [Double]
    /// Per-second vitals from the front end (or a vitals file), ascending by time.
    package var vitals: [SecondVitals]
    /// RMSSD readings (ms), used for HRV when there are no beats.
    package var hrv: [TimedValue]
    /// Breathing-rate and movement samples from a beats file.
    package var breathing: [TimedValue]
    package var movement: [TimedValue]
    /// Whether the vitals' `movement` values were measured. The front end always measures
    /// movement; a vitals file without a `movement` column does not, and its zeros must not
    /// read as "lying still".
    package var vitalsMovementMeasured: Bool
    package var inBed: InBedRule
    /// Whether the first and the last in-bed second were seen as a bed entry and a bed exit
    /// although the vitals do not show the empty bed around them (the hub's session tracker
    /// hands over a night trimmed to its stay). A file shows them by rows not present.
    package var seen: BedEdges

    package init(beats: [Double] = [], vitals: [SecondVitals] = [], hrv: [TimedValue] = [],
                breathing: [TimedValue] = [], movement: [TimedValue] = [], vitalsMovementMeasured: Bool = true,
                inBed: InBedRule? = nil, seen: BedEdges = []) {
        self.beats = beats; self.vitals = vitals; self.hrv = hrv
        self.breathing = breathing; self.movement = movement
        self.vitalsMovementMeasured = vitalsMovementMeasured
        self.inBed = inBed ?? (vitals.isEmpty ? .wholeSpan : .presence)
        self.seen = seen
    }

    /// A parsed vitals file as the analyzer's input (in bed where `present`).
    package init(vitalsFile v: InputFormats.Vitals, inBed: InBedRule = .presence) {
        self.init(vitals: v.seconds, hrv: v.hrv, vitalsMovementMeasured: v.hasMovement, inBed: inBed)
    }

    /// Whether any movement signal is in the input.
    var movementMeasured: Bool { !movement.isEmpty || (vitalsMovementMeasured && !vitals.isEmpty) }
}

/// Which epochs count as in bed.
package enum InBedRule: Sendable, Hashable {
    /// Every epoch from the first to the last beat (research data: one in-bed period).
    case wholeSpan
    /// Epochs where most seconds of `vitals` are present, split into sessions by `SessionRules`.
    case presence
}

/// Getting into and out of bed, as the input saw them.
package struct BedEdges: OptionSet, Sendable, Hashable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    package static let entry = BedEdges(rawValue: 1)
    package static let exit = BedEdges(rawValue: 2)
}

/// Beats and vitals in, staged sessions with metrics out. Pure: no clock, no files.
package struct SleepAnalyzer: Sendable {
    /// The fitted models; each night is staged by the one for its kind (`StagingModels`).
    package var models: StagingModels
    package var rules: SessionRules
    package var timeZone: TimeZone
    /// Whether each night's breathing joins the model, learnt from the night itself
    /// (`NightBreathing`); false stages from the fitted features alone (the bench measures both).
    package var learnsBreathing: Bool
    /// Whether a night with beats and movement (the pod's) learns its movement from the night
    /// (`NightMovement`); false keeps the fitted movement emission (the bench measures both).
    package var learnsMovement: Bool
    /// Whether the epochs at which the sleeper was seen getting into or out of bed are awake
    /// (`bedEdgeRows`); false leaves them to the model (the bench measures both).
    package var awakeAtBedEdges: Bool
    /// Whether the night's awake epochs are as many as its stage probabilities expect
    /// (`NightWakeShare`); false takes each epoch's likeliest stage on its own (the bench
    /// measures both).
    package var decidesWakeByNight: Bool

    package init(models: StagingModels = .default, rules: SessionRules = SessionRules(),
                timeZone: TimeZone = .current, learnsBreathing: Bool = true, learnsMovement: Bool = true,
                awakeAtBedEdges: Bool = true, decidesWakeByNight: Bool = true) {
        self.models = models; self.rules = rules; self.timeZone = timeZone
        self.learnsBreathing = learnsBreathing; self.learnsMovement = learnsMovement
        self.awakeAtBedEdges = awakeAtBedEdges; self.decidesWakeByNight = decidesWakeByNight
    }

    /// One model for every kind of night.
    package init(model: StagingModel, rules: SessionRules = SessionRules(),
                timeZone: TimeZone = .current, learnsBreathing: Bool = true, learnsMovement: Bool = true,
                awakeAtBedEdges: Bool = true, decidesWakeByNight: Bool = true) {
        self.init(models: StagingModels(single: model), rules: rules, timeZone: timeZone,
                  learnsBreathing: learnsBreathing, learnsMovement: learnsMovement, awakeAtBedEdges: awakeAtBedEdges,
                  decidesWakeByNight: decidesWakeByNight)
    }

    /// The entry point for the pod: beats and vitals from the front end. With no vitals
    /// the beats are taken as one in-bed period.
    package func analyze(beats: [Double], vitals: [SecondVitals], isFinal: Bool = true) -> [SleepSession] {
        analyze(AnalysisInput(beats: beats, vitals: vitals), isFinal: isFinal)
    }

    /// `isFinal` false gives preliminary stages (each epoch sees only the past), as live.
    package func analyze(_ input: AnalysisInput, isFinal: Bool = true) -> [SleepSession] {
        guard let (gridStart, count, present, seenEmpty) = grid(input) else { return [] }
        let extractor = EpochFeatureExtractor(timeZone: timeZone)
        var features = extractor.features(gridStart: gridStart, count: count, beats: input.beats,
                                          vitals: input.vitals, hrv: input.hrv,
                                          breathing: input.breathing, movement: input.movement,
                                          vitalsMovementMeasured: input.vitalsMovementMeasured)
        for i in 0..<count { features[i].present = present[i] }
        let ranges = input.inBed == .wholeSpan ? [0..<count] : rules.sessions(present: present, seenEmpty: seenEmpty)
        return ranges.map { range in
            // An edge needs the side seen empty next to the stay, not a hole in the data.
            var edges: BedEdges = []
            let emptyBefore = seenEmpty[..<range.lowerBound].reversed().prefix { $0 }.count
            let beforeEmpty = range.lowerBound - emptyBefore - 1
            if Self.isEntry(emptySeconds: Double(emptyBefore) * epochLength, occupiedBefore: beforeEmpty >= 0 && present[beforeEmpty])
                || (input.inBed == .presence && input.seen.contains(.entry)) { edges.insert(.entry) }
            if (range.upperBound < count && seenEmpty[range.upperBound])
                || (input.inBed == .presence && input.seen.contains(.exit)) { edges.insert(.exit) }
            return session(features: Array(features[range]), seenEmpty: Array(seenEmpty[range]),
                           start: gridStart + Double(range.lowerBound) * epochLength,
                           edges: edges, isFinal: isFinal, movementMeasured: input.movementMeasured)
        }
    }

    /// Stages and metrics for one session's epochs; `seenEmpty` marks its epochs whose data say
    /// the side was empty (not a hole in the data), `edges` the session's ends that were a bed
    /// entry or exit.
    func session(features input: [EpochFeatures], seenEmpty: [Bool], start: Double, edges: BedEdges,
                 isFinal: Bool, movementMeasured: Bool) -> SleepSession {
        var features = input
        let (inBed, rows) = Self.modelRows(features, movementMeasured: movementMeasured)
        let bedFeatures = inBed.map { features[$0] }
        // Heart rate relative to the night.
        let z = NightNormalization.robustZ(bedFeatures.map(\.heartRate))
        let pct = NightNormalization.percentiles(bedFeatures.map(\.heartRate))
        for (k, i) in inBed.enumerated() {
            features[i].heartRateZ = z[k]
            features[i].heartRatePercentile = pct[k]
        }
        let kind = StagingModels.Kind(rows: rows, beatsSeen: bedFeatures.contains { $0.beats > 0 })
        let model = models.model(for: kind)
        var fittedRows = rows
        var signals = learnsBreathing ? NightBreathing.signals(bedFeatures.map(NightBreathing.row)) : []
        // With its movement learnt, the night is also fitted starting from the watch's movement
        // shape (the rows whole), and keeps the likelier fit (`NightLearning.probabilities`).
        var initialRows: [[Double?]]?
        if learnsMovement, NightMovement.isLearnt(for: kind) {
            let split = NightMovement.split(rows: rows, model: model)
            fittedRows = split.rows
            if let movement = split.signal {
                signals.append(movement)
                initialRows = rows
            }
        }
        let awake = awakeAtBedEdges ? Self.bedEdgeRows(seenEmpty: seenEmpty, inBed: inBed, edges: edges) : []
        let probs = NightLearning.probabilities(model: model, rows: fittedRows, signals: signals, awake: awake,
                                                initialRows: initialRows, isFinal: isFinal)
        var p = [StageProbabilities](repeating: .certain(.awake), count: features.count)
        for (k, i) in inBed.enumerated() { p[i] = probs[k] }
        // An epoch seen empty is a trip out of bed: awake. An epoch without data (the link was
        // down) gets no epoch at all: its stage is unknown, and calling it awake would put
        // the outage into the night's WASO and efficiency.
        let kept = features.indices.filter { features[$0].present || seenEmpty[$0] }
        let stages = decidesWakeByNight ? NightWakeShare.stages(kept.map { p[$0] }) : kept.map { p[$0].mostLikely }
        var epochs = zip(kept, stages).map { i, stage in
            Epoch(start: start + Double(i) * epochLength, stage: stage, probabilities: p[i], features: features[i])
        }
        if let onset = epochs.first(where: { $0.stage != .awake })?.start {
            for i in epochs.indices where epochs[i].start >= onset {
                epochs[i].features.minutesSinceSleepOnset = (epochs[i].start - onset) / 60
            }
        }
        let end = start + Double(features.count) * epochLength
        return SleepSession(start: start, end: end, wakeDate: LocalCalendar(timeZone: timeZone).wakeDate(sessionEnd: end), timeZone: timeZone.identifier,
                            isFinal: isFinal, epochs: epochs, metrics: SessionMetrics(epochs: epochs, start: start, end: end))
    }

    /// Seconds an empty start of the data must last for the stay after it to begin with a bed
    /// entry. A sleeper already in bed when the data begin reads empty until the front end's
    /// presence override has seen a minute of strong body signal (`FrontEndConfig.
    /// piezoOverrideSeconds`: the capacitance baseline was learnt with them in it); on the 40
    /// textbook nights that took 59–121 s. So a shorter empty start is the front end starting
    /// up, not someone getting in.
    package static let emptyStartBeforeEntry: Double = 300

    /// Whether a stay after `emptySeconds` of an empty side began with a bed entry: always when
    /// the side was seen occupied before the empty stretch (someone left and came back),
    /// else when the empty start of the data outlasts the front end's start-up.
    package static func isEntry(emptySeconds: Double, occupiedBefore: Bool) -> Bool {
        emptySeconds > 0 && (occupiedBefore || emptySeconds >= emptyStartBeforeEntry)
    }

    /// The in-bed rows (positions in `inBed`) at which the sleeper got into or out of bed: the
    /// session's first row after an entry, its last before an exit, and the rows either side of
    /// a trip out of bed within it (an epoch seen empty next to it: a hole in the data is not a
    /// trip). Nobody gets into or out of bed asleep, so these are awake; the transitions then
    /// decide how far the waking reaches, as the evidence allows.
    static func bedEdgeRows(seenEmpty: [Bool], inBed: [Int], edges: BedEdges) -> Set<Int> {
        var rows = Set<Int>()
        for (k, i) in inBed.enumerated() {
            let before = i > 0 ? seenEmpty[i - 1] : edges.contains(.entry)
            let after = i + 1 < seenEmpty.count ? seenEmpty[i + 1] : edges.contains(.exit)
            if before || after { rows.insert(k) }
        }
        return rows
    }

    /// The in-bed epochs of a session and their model feature rows (what the model sees;
    /// training uses the same rows).
    static func modelRows(_ features: [EpochFeatures], movementMeasured: Bool) -> (inBed: [Int], rows: [[Double?]]) {
        let inBed = features.indices.filter { features[$0].present }
        return (inBed, StagingFeatures.matrix(inBed.map { features[$0] }, movementMeasured: movementMeasured))
    }

    /// Per session of `input`: each in-bed epoch's start time and model feature row.
    func modelRows(_ input: AnalysisInput) -> [(start: Double, row: [Double?])] {
        guard let (gridStart, count, present, seenEmpty) = grid(input) else { return [] }
        var features = EpochFeatureExtractor(timeZone: timeZone)
            .features(gridStart: gridStart, count: count, beats: input.beats, vitals: input.vitals, hrv: input.hrv,
                      breathing: input.breathing, movement: input.movement,
                      vitalsMovementMeasured: input.vitalsMovementMeasured)
        for i in 0..<count { features[i].present = present[i] }
        let ranges = input.inBed == .wholeSpan ? [0..<count] : rules.sessions(present: present, seenEmpty: seenEmpty)
        return ranges.flatMap { range in
            let (inBed, rows) = Self.modelRows(Array(features[range]), movementMeasured: input.movementMeasured)
            return zip(inBed, rows).map { (gridStart + Double(range.lowerBound + $0) * epochLength, $1) }
        }
    }

    /// The epoch grid, per-epoch presence, and which epochs the data say were empty (an epoch
    /// without data is neither present nor seen empty).
    func grid(_ input: AnalysisInput) -> (Double, Int, [Bool], [Bool])? {
        switch input.inBed {
        case .wholeSpan:
            let times = input.beats.isEmpty ? input.vitals.map(\.time) : input.beats
            guard let first = times.first, let last = times.last, last >= first else { return nil }
            let start = epochStart(containing: first)
            let count = Int(((epochStart(containing: last) - start) / epochLength).rounded()) + 1
            return (start, count, [Bool](repeating: true, count: count), [Bool](repeating: false, count: count))
        case .presence:
            guard let first = input.vitals.first?.time, let last = input.vitals.last?.time, last >= first
            else { return nil }
            let start = epochStart(containing: first)
            let count = Int(((epochStart(containing: last) - start) / epochLength).rounded()) + 1
            var yes = [Int](repeating: 0, count: count), all = [Int](repeating: 0, count: count)
            for v in input.vitals {
                let k = Int(((v.time - start) / epochLength).rounded(.down))
                guard k >= 0, k < count else { continue }
                all[k] += 1
                if v.present { yes[k] += 1 }
            }
            let present = (0..<count).map { all[$0] > 0 && 2 * yes[$0] > all[$0] }
            return (start, count, present, (0..<count).map { all[$0] > 0 && !present[$0] })
        }
    }
}
