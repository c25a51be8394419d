import ArgumentParser
import Foundation
import Hub
import PodAnalysis
import PodProtocol
import SleepAnalysis
import SleepDomain

/// `podbridge analyze`: offline staging of a capture, a beats file or a vitals file.
/// Parsing and printing only; the analysis is `CaptureAnalysis` (PodAnalysis) and
/// `SleepAnalyzer` (SleepAnalysis).
struct AnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Stage a night from a pod capture, heartbeat times or per-second vitals.",
        discussion: """
        --capture FILE: a capture recorded by `podbridge stream --record` or the virtual pod; \
        samples are placed by their ticks and the capture's clock anchors, each side through \
        the same front end as live, sessions from presence. With --side both (the default) and \
        --epochs-out/--json, one file per side: NAME.left.EXT and NAME.right.EXT. \
        --beats FILE: CSV with header beat_time (Unix seconds), optional signal_time, movement, \
        breathing_rate; the whole file is one stay in bed, kept if it is --min-session long. \
        --vitals FILE: CSV time,heart_rate,hrv_rmssd,breathing_rate,movement,present; sessions \
        come from presence. FILE may be a pipe: /dev/stdin, or a shell's <(…).
        """)

    @Option(name: .long, help: "Capture file (firmware-protocol.md §9).")
    var capture: String?

    @Option(name: .long, help: "With --capture: the side to stage (left, right, both; default both).")
    var side: String?

    /// The sides `--side` names: one side, or both (the default).
    static func sides(_ text: String?) -> [BedSide]? {
        guard let text, text != "both" else { return BedSide.allCases }
        return BedSide(rawValue: text).map { [$0] }
    }

    @Option(name: .long, help: "Beats CSV (one heartbeat per line).")
    var beats: String?

    @Option(name: .long, help: "Vitals CSV (one row per second).")
    var vitals: String?

    @OptionGroup var common: ConfigurationFileOption

    @Option(name: .long, help: "Time zone of the sleeper's clock (default: the configuration's timeZone, else the system's; for a capture, the UTC offset the hub set).")
    var tz: String?

    @Option(name: .customLong("epochs-out"), help: "Write epochs as CSV start,end,stage.")
    var epochsOut: String?

    @Option(name: .long, help: "Write sessions with metrics as JSON.")
    var json: String?

    @Option(name: .long, help: "A scoring of the same night to compare with (CSV start,end,stage, as --epochs-out writes; stage awake, core, deep, rem or unscored; a longer row, a stage block, counts as its 30-s epochs): prints the agreement, each scored epoch against the stage at its middle.")
    var reference: String?

    @Option(name: .customLong("max-gap"), help: "Longest absence in minutes that does not split a session (default: sessions.maxGapMinutes, 20).")
    var maxGap: Double?

    @Option(name: .customLong("min-session"), help: "Shortest session in minutes that is kept (default: sessions.minSessionMinutes, 15).")
    var minSession: Double?

    @Option(name: .customLong("max-data-gap"), help: "Longest stretch without data in minutes that a session is kept across (default: sessions.maxDataGapMinutes, 180).")
    var maxDataGap: Double?

    func validate() throws {
        guard [capture, beats, vitals].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of --capture FILE, --beats FILE or --vitals FILE")
        }
        if side != nil, capture == nil { throw ValidationError("--side goes with --capture") }
        if reference != nil, capture != nil, side == nil || side == "both" {
            throw ValidationError("--reference scores one night: with --capture, name its --side (left or right)")
        }
        if Self.sides(side) == nil { throw ValidationError("unknown side '\(side ?? "")' (use left, right or both)") }
        if let tz, TimeZone(identifier: tz) == nil { throw ValidationError("unknown time zone '\(tz)'") }
        if let epochsOut { try OutputFile.check(epochsOut, option: "--epochs-out") }
        if let json { try OutputFile.check(json, option: "--json") }
        if let minSession, !(minSession >= 0 && minSession.isFinite) {
            throw ValidationError("--min-session takes minutes, 0 or more, not \(minSession)")
        }
        for (name, minutes) in [("--max-gap", maxGap), ("--max-data-gap", maxDataGap)] {
            if let minutes, !(minutes > 0 && minutes.isFinite) {
                throw ValidationError("\(name) takes minutes, a number above 0, not \(minutes)")
            }
        }
    }

    func run() async throws {
        let settings = try common.load { if let tz { $0.timeZone = tz } }
        var zone = tz.flatMap(TimeZone.init(identifier:)) ?? settings.hubTimeZone
        let rules = SessionRules(maxGap: (maxGap ?? settings.sessions.maxGapMinutes) * 60,
                                 minDuration: (minSession ?? settings.sessions.minSessionMinutes) * 60,
                                 maxDataGap: (maxDataGap ?? settings.sessions.maxDataGapMinutes) * 60)
        // (label, sessions): one entry, or one per side of a capture.
        var results: [(label: String?, sessions: [SleepSession])] = []
        var noSession = "nobody in bed long enough"
        if let capture {
            let analysis: CaptureAnalysis
            do {
                analysis = try Self.analyzeCapture(file: capture)
            } catch let error as CaptureAnalysisError {
                throw CommandFailure(error.message(file: capture))
            }
            for warning in analysis.warnings(file: capture) { printError("warning: \(warning)") }
            if tz == nil, let offset = analysis.utcOffsetMinutes, let fixed = TimeZone(secondsFromGMT: Int(offset) * 60) {
                zone = fixed
            }
            let analyzer = SleepAnalyzer(rules: rules, timeZone: zone)
            let sides = Self.sides(side) ?? BedSide.allCases
            for s in sides {
                let r = analysis[s]
                results.append((sides.count > 1 ? s.description : nil, analyzer.analyze(beats: r.beats, vitals: r.vitals)))
            }
        } else {
            let input: AnalysisInput
            do {
                let skipped: [String]
                if let beats {
                    let b = try InputFormats.parseBeats(try read(beats), file: beats)
                    input = AnalysisInput(beats: b.beats, breathing: b.breathing, movement: b.movement, inBed: .wholeSpan)
                    skipped = b.skipped.descriptions(file: beats)
                } else {
                    let path = vitals!
                    let v = try InputFormats.parseVitals(try read(path), file: path)
                    input = AnalysisInput(vitalsFile: v)
                    skipped = v.skipped.descriptions(file: path)
                }
                for line in skipped { printError("warning: \(line)") }
            } catch let error as InputError {
                throw CommandFailure(error.description)
            }
            var sessions = SleepAnalyzer(rules: rules, timeZone: zone).analyze(input)
            // A beats file is one stay in bed, kept by the same rule as a stay from presence.
            if beats != nil, let stay = sessions.first, stay.end - stay.start < rules.minDuration {
                sessions = []
                noSession = "the beats span \(Self.minutes(stay.end - stay.start)) min, shorter than the shortest "
                    + "session kept (\(Self.minutes(rules.minDuration)) min: --min-session, or sessions.minSessionMinutes)"
            }
            results.append((nil, sessions))
        }
        // Read before anything is printed, so a bad reference fails the command cleanly.
        let referenceEpochs: [InputFormats.StagedInterval]?
        do {
            referenceEpochs = try reference.map { try InputFormats.parseStages(try read($0), file: $0) }
        } catch let error as InputError {
            throw CommandFailure(error.description)
        }
        let fmt = DateFormatter()
        fmt.dateFormat = "yyyy-MM-dd HH:mm"
        fmt.timeZone = zone
        // A night across a clock change shows each end's UTC offset: 01:30 – 07:00 on the night
        // the clocks go back is ambiguous (and its length wrong by an hour) without them.
        let offsetFmt = DateFormatter()
        offsetFmt.dateFormat = "yyyy-MM-dd HH:mm xxx"
        offsetFmt.timeZone = zone
        func span(_ start: Double, _ end: Double) -> String {
            let a = Date(timeIntervalSince1970: start), b = Date(timeIntervalSince1970: end)
            let f = zone.secondsFromGMT(for: a) == zone.secondsFromGMT(for: b) ? fmt : offsetFmt
            return "\(f.string(from: a)) – \(f.string(from: b)) \(zone.identifier)"
        }
        for (label, sessions) in results {
            if let epochsOut {
                let path = Self.path(epochsOut, label: label)
                try OutputFile.write(Data(InputFormats.epochsCSV(sessions).utf8), to: path)
            }
            if let json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try OutputFile.write(try encoder.encode(sessions), to: Self.path(json, label: label))
            }
            let prefix = label.map { "\($0): " } ?? ""
            if sessions.isEmpty { print("\(prefix)no session: \(noSession)") }
            for (i, s) in sessions.enumerated() {
                print("\(prefix)session \(i + 1): \(span(s.start, s.end)), wake date \(s.wakeDate)")
                print(HypnogramText.render(s))
            }
            if let referenceEpochs, let reference {
                // Epochs outside the sessions count as awake (out of bed), but a reference none
                // of whose epochs falls in a session is another night: its figures would mean nothing.
                let scored = referenceEpochs.filter { $0.stage != nil }
                guard scored.isEmpty
                    || sessions.contains(where: { s in scored.contains { ($0.start + $0.end) / 2 >= s.start && ($0.start + $0.end) / 2 < s.end } })
                else {
                    throw CommandFailure(sessions.isEmpty
                        ? "\(reference): no session was staged to compare it with"
                        : "\(reference): none of its scored epochs falls in a staged session (its scored epochs run "
                            + "\(span(scored[0].start, scored[scored.count - 1].end))): not a scoring of this night")
                }
                print(Self.agreement(StagingEvaluation(reference: referenceEpochs, predicted: sessions), with: reference))
            }
        }
    }

    /// How the night's stages agree with a reference scoring (the held-out rule of docs/staging.md).
    static func agreement(_ e: StagingEvaluation, with file: String) -> String {
        guard !e.pairs.isEmpty else { return "agreement with \(file): no scored epoch to compare" }
        let counts = e.confusion(.four)
        // Minutes of the sleep stages (indices 1–3), counting the epochs `epochs` gives per stage.
        func sleep(_ epochs: (Int) -> Int) -> Double { Double((1..<4).map(epochs).reduce(0, +)) * epochLength / 60 }
        let scored = sleep { counts[$0].reduce(0, +) }, staged = sleep { c in counts.map { $0[c] }.reduce(0, +) }
        func f(_ x: Double) -> String { x.isNaN ? "–" : String(format: "%.3f", x) }
        func r(_ x: Double) -> String { x.isNaN ? "–" : String(format: "%.2f", x) }
        return """
        agreement with \(file): \(e.pairs.count) scored epochs, each against the stage at its middle (none there: awake)
          awake/core/deep/rem: accuracy \(f(e.accuracy(.four))), kappa \(f(e.kappa(.four)))
          awake/NREM/REM: accuracy \(f(e.accuracy(.three))), kappa \(f(e.kappa(.three)))
          awake/asleep: accuracy \(f(e.accuracy(.two))), kappa \(f(e.kappa(.two)))
          recall: awake \(r(e.recall(.awake))), core \(r(e.recall(.core))), deep \(r(e.recall(.deep))), rem \(r(e.recall(.rem))); \
        wake specificity \(r(e.wakeSpecificity))
          total sleep: \(String(format: "%.1f", staged)) min staged, \(String(format: "%.1f", scored)) min scored \
        (\(String(format: "%+.1f", e.totalSleepBiasMinutes)) min)
          confusion (rows scored awake/core/deep/rem, columns staged): \(counts)
        """
    }

    /// Seconds as minutes for a message: "0.5", "15".
    static func minutes(_ seconds: Double) -> String {
        let m = seconds / 60
        return m == m.rounded() ? String(Int(m)) : String(format: "%.1f", m)
    }

    /// `night.csv` with label `left` → `night.left.csv` (one file per side of a capture).
    static func path(_ path: String, label: String?) -> String {
        guard let label else { return path }
        let url = URL(fileURLWithPath: path)
        let ext = url.pathExtension
        let base = url.deletingPathExtension().lastPathComponent
        let name = ext.isEmpty ? "\(base).\(label)" : "\(base).\(label).\(ext)"
        return url.deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Reads the capture in 1 MiB chunks into `CaptureStreamAnalyzer`: memory stays
    /// flat however long the night (issue 10 item 8).
    static func analyzeCapture(file path: String) throws -> CaptureAnalysis {
        let handle = try InputFile.open(path)
        defer { try? handle.close() }
        var analyzer = CaptureStreamAnalyzer()
        while true {
            let chunk: Data
            do {
                guard let data = try handle.read(upToCount: 1 << 20), !data.isEmpty else { break }
                chunk = data
            } catch {
                throw CommandFailure("\(path): cannot read (\(error.localizedDescription))")
            }
            // (An untyped closure: a typed-throws one here crashes the 6.3 compiler's IRGen.)
            try chunk.withUnsafeBytes { raw in try analyzer.feed(raw) }
        }
        return try analyzer.finish()
    }

    private func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    private func read(_ path: String) throws -> String {
        try InputFile.text(path)
    }
}
