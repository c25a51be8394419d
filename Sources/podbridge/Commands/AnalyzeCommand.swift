import ArgumentParser
import Foundation
import SleepAnalysis

/// `podbridge analyze`: offline staging of a beats or vitals file. Parsing and printing
/// only; the analysis is `SleepAnalyzer` in SleepAnalysis.
struct AnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Stage a night from heartbeat times or per-second vitals.",
        discussion: """
        --beats FILE: CSV with header beat_time (Unix seconds), optional signal_time, movement, \
        breathing_rate; the whole file is one stay in bed. --vitals FILE: CSV \
        time,heart_rate,hrv_rmssd,breathing_rate,movement,present; sessions come from presence.
        """)

    @Option(name: .long, help: "Beats CSV (one heartbeat per line).")
    var beats: String?

    @Option(name: .long, help: "Vitals CSV (one row per second).")
    var vitals: String?

    @Option(name: .long, help: "Time zone of the sleeper's clock (default: the system's).")
    var tz: String?

    @Option(name: .customLong("epochs-out"), help: "Write epochs as CSV start,end,stage.")
    var epochsOut: String?

    @Option(name: .long, help: "Write sessions with metrics as JSON.")
    var json: String?

    @Option(name: .customLong("max-gap"), help: "Longest absence in minutes that does not split a session.")
    var maxGap: Double = 20

    @Option(name: .customLong("min-session"), help: "Shortest session in minutes that is kept.")
    var minSession: Double = 15

    func validate() throws {
        guard (beats == nil) != (vitals == nil) else {
            throw ValidationError("give exactly one of --beats FILE or --vitals FILE")
        }
        if let tz, TimeZone(identifier: tz) == nil { throw ValidationError("unknown time zone '\(tz)'") }
    }

    func run() async throws {
        let zone = tz.flatMap(TimeZone.init(identifier:)) ?? .current
        let input: AnalysisInput
        do {
            if let beats {
                let b = try InputFormats.parseBeats(try read(beats), file: beats)
                input = AnalysisInput(beats: b.beats, breathing: b.breathing, movement: b.movement, inBed: .wholeSpan)
            } else {
                let path = vitals!
                let v = try InputFormats.parseVitals(try read(path), file: path)
                input = AnalysisInput(vitals: v.seconds, hrv: v.hrv, inBed: .presence)
            }
        } catch let error as InputError {
            throw ValidationError(error.description)
        }
        let analyzer = SleepAnalyzer(rules: SessionRules(maxGap: maxGap * 60, minDuration: minSession * 60),
                                     timeZone: zone)
        let sessions = analyzer.analyze(input)
        if let epochsOut {
            try Data(InputFormats.epochsCSV(sessions).utf8).write(to: URL(fileURLWithPath: epochsOut))
        }
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(sessions).write(to: URL(fileURLWithPath: json))
        }
        if sessions.isEmpty { print("no session: nobody in bed long enough") }
        let fmt = DateFormatter()
        fmt.dateFormat = "yyyy-MM-dd HH:mm"
        fmt.timeZone = zone
        for (i, s) in sessions.enumerated() {
            print("session \(i + 1): \(fmt.string(from: Date(timeIntervalSince1970: s.start))) – "
                  + "\(fmt.string(from: Date(timeIntervalSince1970: s.end))) \(zone.identifier), wake date \(s.wakeDate)")
            print(HypnogramText.render(s))
        }
    }

    private func read(_ path: String) throws -> String {
        do {
            return try String(contentsOf: URL(fileURLWithPath: path), encoding: .utf8)
        } catch {
            throw ValidationError("\(path): cannot read (\(error.localizedDescription))")
        }
    }
}
