import SleepDomain

/// Parsers of the analyzer's text inputs. They take text (the command reads the file)
/// and the file's name for error messages.
///
/// Beats CSV: header `beat_time` (required), optionally `signal_time` with `movement`
/// and/or `breathing_rate`. `beat_time` is one heartbeat in Unix seconds with fraction.
/// Movement and breathing come at their own pace, so they have their own time column,
/// `signal_time`; a row may carry a beat, a signal sample, or both, and a column with
/// nothing to say on that row is left empty. Each time column must strictly increase.
///
///     beat_time,signal_time,movement,breathing_rate
///     601254420.076,601254420,0.2,14.5
///     601254420.936,,,
///
/// Vitals CSV: `time,heart_rate,hrv_rmssd,breathing_rate,movement,present`, one row per
/// second (any pace works), `time` required and strictly increasing, every other column
/// optional and possibly empty. `present` is 1/0/true/false; when empty, the row counts
/// as present if it has a heart rate. Heart rate outside 30–200 bpm, breathing outside
/// 4–40 per minute and a negative RMSSD are kept out as implausible readings, never used as
/// numbers, and counted per column (`SkippedReadings`) so the user is told.
///
/// Every time column holds Unix seconds (0 to `latestTime`) spanning at most
/// `maximumSpan`; anything else is an `InputError` naming the line (found by fuzzing: a
/// beats file whose last time was 19 000 years after its first made the analyzer ask for
/// 20 GB).
package enum InputFormats {
    /// The longest span of times a file may hold (31 days): the analyzer lays an epoch grid
    /// over it, and a file of nights is split by night long before.
    package static let maximumSpan: Double = 31 * 86_400
    /// The latest time accepted, in Unix seconds (year 2286).
    package static let latestTime: Double = 10_000_000_000

    /// The physiological limits a file's readings are held to: the front end's own
    /// (`FrontEndConfig`), so a reading from a file and an estimate from the pod are judged alike.
    static let limits = FrontEndConfig()

    /// Readings a file held that no body gives (a heart rate of 500, breathing 60 times a
    /// minute): left out of the analysis, and counted per column with the first line, so the
    /// command can say what it skipped instead of staging silently around it.
    package struct SkippedReadings: Sendable, Equatable {
        package struct Column: Sendable, Equatable {
            package var count: Int
            package var firstLine: Int
        }
        package private(set) var columns: [String: Column] = [:]
        package init() {}

        mutating func skip(_ column: String, line: Int) {
            columns[column, default: Column(count: 0, firstLine: line)].count += 1
        }

        /// `value` if it lies within `limits`; otherwise nil, counted as skipped in `column`.
        mutating func plausible(_ value: Double, within limits: ClosedRange<Double>, column: String, line: Int) -> Double? {
            if limits.contains(value) { return value }
            skip(column, line: line)
            return nil
        }

        /// One sentence per column with skipped readings, in the order of `checks`.
        package func descriptions(file: String) -> [String] {
            Self.checks.compactMap { name, limit in
                columns[name].map { c in
                    "\(file): \(c.count) \(name) value\(c.count == 1 ? "" : "s") \(limit) skipped (first on line \(c.firstLine))"
                }
            }
        }

        /// The columns checked, with the limit a reading must keep, as the sentence says it.
        static let checks: [(column: String, limit: String)] = {
            func range(_ r: ClosedRange<Double>) -> String { "\(Int(r.lowerBound))–\(Int(r.upperBound))" }
            return [("heart_rate", "outside \(range(limits.heartRateLimits)) bpm"),
                    ("breathing_rate", "outside \(range(limits.breathingRateLimits)) per minute"),
                    ("hrv_rmssd", "below 0 ms")]
        }()
    }

    package struct Beats: Sendable, Equatable {
        package var beats: [Double]
        package var breathing: [TimedValue]
        package var movement: [TimedValue]
        package var skipped = SkippedReadings()
    }

    package static func parseBeats(_ text: String, file: String) throws -> Beats {
        let table = try CSVTable(text: text, file: file,
                                 known: ["beat_time", "signal_time", "movement", "breathing_rate"],
                                 required: ["beat_time"])
        let hasSignals = table.column("movement") != nil || table.column("breathing_rate") != nil
        if hasSignals, table.column("signal_time") == nil {
            throw InputError(file: file, line: 1, kind: .missingColumn("signal_time"))
        }
        var out = Beats(beats: [], breathing: [], movement: [])
        var beatOrder = StrictlyIncreasing(column: "beat_time", file: file)
        var signalOrder = StrictlyIncreasing(column: "signal_time", file: file)
        let bc = table.column("beat_time")!, sc = table.column("signal_time")
        let mc = table.column("movement"), rc = table.column("breathing_rate")
        for (line, f) in table.rows {
            if let t = try CSVTable.number(f[bc], column: "beat_time", file: file, line: line) {
                try beatOrder.check(t, line: line)
                out.beats.append(t)
            }
            guard let sc else { continue }
            let st = try CSVTable.number(f[sc], column: "signal_time", file: file, line: line)
            let m = try mc.flatMap { try CSVTable.number(f[$0], column: "movement", file: file, line: line) }
            let r = try rc.flatMap { try CSVTable.number(f[$0], column: "breathing_rate", file: file, line: line) }
            guard let st else {
                if m != nil { throw InputError(file: file, line: line, kind: .missingValue(column: "signal_time")) }
                if r != nil { throw InputError(file: file, line: line, kind: .missingValue(column: "signal_time")) }
                continue
            }
            try signalOrder.check(st, line: line)
            if let m { out.movement.append(TimedValue(time: st, value: m)) }
            if let r, let r = out.skipped.plausible(r, within: limits.breathingRateLimits, column: "breathing_rate", line: line) {
                out.breathing.append(TimedValue(time: st, value: r))
            }
        }
        if out.beats.isEmpty { throw InputError(file: file, line: 2, kind: .missingValue(column: "beat_time")) }
        return out
    }

    package struct Vitals: Sendable, Equatable {
        package var seconds: [SecondVitals]
        /// RMSSD readings (ms) from the `hrv_rmssd` column.
        package var hrv: [TimedValue]
        /// Whether the file has a `movement` column (without one, movement was not measured).
        package var hasMovement: Bool
        package var skipped = SkippedReadings()
    }

    package static func parseVitals(_ text: String, file: String) throws -> Vitals {
        let table = try CSVTable(text: text, file: file,
                                 known: ["time", "heart_rate", "hrv_rmssd", "breathing_rate", "movement", "present"],
                                 required: ["time"])
        var out = Vitals(seconds: [], hrv: [], hasMovement: table.column("movement") != nil)
        var order = StrictlyIncreasing(column: "time", file: file)
        func num(_ name: String, _ f: [String], _ line: Int) throws -> Double? {
            guard let c = table.column(name) else { return nil }
            return try CSVTable.number(f[c], column: name, file: file, line: line)
        }
        for (line, f) in table.rows {
            guard let t = try num("time", f, line) else {
                throw InputError(file: file, line: line, kind: .missingValue(column: "time"))
            }
            try order.check(t, line: line)
            let hr = try num("heart_rate", f, line)
            let rmssd = try num("hrv_rmssd", f, line)
            let br = try num("breathing_rate", f, line)
            let mv = try num("movement", f, line)
            var present = hr != nil
            if let c = table.column("present"), !f[c].isEmpty {
                switch f[c].lowercased() {
                case "1", "true": present = true
                case "0", "false": present = false
                default: throw InputError(file: file, line: line, kind: .notABoolean(column: "present", text: f[c]))
                }
            }
            /// A measured value within `limits`, an implausible one (counted), or none measured.
            func reading(_ value: Double?, _ limits: ClosedRange<Double>, _ column: String) -> Reading {
                guard let value else { return .none(present ? .lowQuality : .absent) }
                return out.skipped.plausible(value, within: limits, column: column, line: line).map(Reading.value) ?? .none(.implausible)
            }
            let heart = reading(hr, limits.heartRateLimits, "heart_rate")
            let breath = reading(br, limits.breathingRateLimits, "breathing_rate")
            out.seconds.append(SecondVitals(time: t, heartRate: heart, breathingRate: breath,
                                            movement: mv ?? 0, present: present, quality: present ? 1 : 0))
            if let rmssd, let rmssd = out.skipped.plausible(rmssd, within: 0...Double.infinity, column: "hrv_rmssd", line: line) {
                out.hrv.append(TimedValue(time: t, value: rmssd))
            }
        }
        return out
    }

    /// Stages CSV `start,end,stage` (the epochs the analyzer writes, and the technicians'
    /// scoring in slpdb-dev). `unscored` epochs come back with a nil stage. A row longer than
    /// an epoch (a stage block, as a tracker or Apple Health exports them) comes back as its
    /// epochs: `round(length / 30 s)` equal parts, so every scored epoch counts once.
    /// Rows must not overlap.
    package struct StagedInterval: Sendable, Equatable {
        package var start: Double
        package var end: Double
        package var stage: SleepStage?
        package init(start: Double, end: Double, stage: SleepStage?) {
            self.start = start; self.end = end; self.stage = stage
        }
    }

    package static func parseStages(_ text: String, file: String) throws -> [StagedInterval] {
        let table = try CSVTable(text: text, file: file, known: ["start", "end", "stage"],
                                 required: ["start", "end", "stage"])
        var order = StrictlyIncreasing(column: "start", file: file)
        var previousEnd = -Double.infinity
        var firstStart: Double?
        let s = table.column("start")!, e = table.column("end")!, g = table.column("stage")!
        return try table.rows.flatMap { line, f in
            guard let a = try CSVTable.number(f[s], column: "start", file: file, line: line) else {
                throw InputError(file: file, line: line, kind: .missingValue(column: "start"))
            }
            guard let b = try CSVTable.number(f[e], column: "end", file: file, line: line) else {
                throw InputError(file: file, line: line, kind: .missingValue(column: "end"))
            }
            try order.check(a, line: line)
            guard b <= InputFormats.latestTime else {
                throw InputError(file: file, line: line, kind: .timeOutOfRange(column: "end", text: f[e]))
            }
            guard b > a else { throw InputError(file: file, line: line, kind: .endNotAfterStart) }
            // The ends too stay within the span a file may cover: one row from 1970 to 2286
            // would otherwise be ten billion seconds of epochs (found by the input-formats fuzzer).
            let from = firstStart ?? a
            firstStart = from
            guard b - from <= InputFormats.maximumSpan else {
                throw InputError(file: file, line: line, kind: .spanTooLong(column: "end", days: (b - from) / 86_400))
            }
            // A millisecond of slack: times written with fewer decimals than they were kept.
            guard a >= previousEnd - 0.001 else { throw InputError(file: file, line: line, kind: .overlapsPrevious) }
            previousEnd = b
            let stage: SleepStage?
            if f[g] == "unscored" { stage = nil } else if let st = SleepStage(rawValue: f[g]) { stage = st } else {
                throw InputError(file: file, line: line, kind: .unknownStage(f[g]))
            }
            let parts = max(1, Int(((b - a) / epochLength).rounded()))
            let length = (b - a) / Double(parts)
            return (0..<parts).map { i in
                StagedInterval(start: a + Double(i) * length, end: i == parts - 1 ? b : a + Double(i + 1) * length, stage: stage)
            }
        }
    }

    /// The epochs CSV the analyzer writes: `start,end,stage`, integral Unix seconds.
    package static func epochsCSV(_ sessions: [SleepSession]) -> String {
        var out = "start,end,stage\n"
        for s in sessions {
            for e in s.epochs { out += "\(Int(e.start)),\(Int(e.end)),\(e.stage.rawValue)\n" }
        }
        return out
    }
}
