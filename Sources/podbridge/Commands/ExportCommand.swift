import ArgumentParser
import Foundation
import Hub
import SleepStore
import SleepDomain

/// `podbridge export`: a night, a date range or everything, as stage blocks, JSON or CSV.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export sleep sessions by wake date as stage blocks, JSON or CSV.",
        discussion: """
            Sessions belong to the local date they end on (wake date). Without --tz, each \
            session keeps the zone it was recorded in; with --tz, wake dates and times are \
            computed in that zone. Formats are described in docs/export-format.md.
            """)

    @OptionGroup var common: ConfigurationOptions

    @Option(name: .long, help: "One wake date (YYYY-MM-DD).")
    var date: String?

    @Option(name: .long, help: "First wake date of a range (YYYY-MM-DD).")
    var from: String?

    @Option(name: .long, help: "Last wake date of a range, inclusive (YYYY-MM-DD).")
    var to: String?

    @Flag(name: .long, help: "Every session in the database.")
    var all = false

    @Option(name: .long, help: "Only this side: left or right.")
    var side: String?

    @Option(name: .long, help: "Output format: blocks, json or csv (default: the configuration's export.format).")
    var format: String?

    @Flag(name: .long, help: "Include 30-second epochs (json: per session; csv: one row per epoch).")
    var epochs = false

    @Option(name: .long, help: "IANA time zone for wake dates and timestamps (e.g. Europe/Berlin).")
    var tz: String?

    @Option(name: .long, help: "Write to this file instead of standard output.")
    var output: String?

    func run() async throws {
        let settings = try common.load()
        let db = settings.databasePath
        let format: ExportFormat
        let selection: ExportSelection
        let zone: TimeZone?
        let bedSide: BedSide?
        do {
            format = try ExportFormat.parse(self.format ?? settings.export.format)
            selection = try Self.selection(date: date, from: from, to: to, all: all)
            zone = try tz.map { name in
                guard let zone = TimeZone(identifier: name) else { throw ExportError.unknownTimeZone(name) }
                return zone
            }
            bedSide = try side.map { name in
                guard let side = BedSide(rawValue: name.lowercased()) else {
                    throw ValidationError("unknown side '\(name)' (use left or right)")
                }
                return side
            }
        } catch let error as ExportError {
            throw ValidationError(error.description)
        }
        do {
            let store = try ExistingStore.open(db)
            let text = try await SleepExporter(store: store).export(
                selection, side: bedSide, format: format, includeEpochs: epochs, timeZone: zone)
            if let output {
                try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        } catch let error as ExportError {
            try Self.fail(error.description)
        } catch let error as StoreError {
            try Self.fail(error.description)
        }
    }

    /// Prints the message to standard error and exits 1 (nothing was exported).
    static func fail(_ message: String) throws -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        throw ExitCode.failure
    }

    /// Exactly one of --date, --from/--to, --all.
    static func selection(date: String?, from: String?, to: String?, all: Bool) throws -> ExportSelection {
        func parse(_ text: String) throws -> CalendarDay {
            guard let date = CalendarDay(text) else { throw ExportError.invalidDate(text) }
            return date
        }
        let chosen = (date != nil ? 1 : 0) + (from != nil || to != nil ? 1 : 0) + (all ? 1 : 0)
        guard chosen == 1 else { throw ValidationError("choose exactly one of --date, --from/--to, --all") }
        if let date { return .date(try parse(date)) }
        if all { return .all }
        guard let from, let to else { throw ValidationError("--from and --to go together") }
        return .range(from: try parse(from), to: try parse(to))
    }
}
