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

    /// How the command was called is checked before anything is opened, so a mistake there
    /// is answered with this command's usage.
    func validate() throws {
        do {
            if let format, try ExportFormat.parse(format) == .blocks, epochs { throw ExportError.epochsNeedJSONOrCSV }
            if case let .range(first, last) = try Self.selection(date: date, from: from, to: to, all: all), first > last {
                throw ExportError.invertedRange(from: first, to: last)
            }
            _ = try zone()
        } catch let error as ExportError {
            throw ValidationError(error.description)
        }
        _ = try bedSide()
        if let output { try OutputFile.check(output, option: "--output") }
    }

    func run() async throws {
        let settings = try common.load()
        let db = settings.databasePath
        let format: ExportFormat
        let selection: ExportSelection
        let zone: TimeZone?
        let bedSide: BedSide?
        do {
            // The configuration's export.format is checked here, with the file named.
            format = try ExportFormat.parse(self.format ?? settings.export.format)
            selection = try Self.selection(date: date, from: from, to: to, all: all)
            zone = try self.zone()
            bedSide = try self.bedSide()
        } catch let error as ExportError {
            throw CommandFailure(error.description)
        }
        do {
            let store = try await ExistingStore.open(db)
            defer { try? store.close() }
            let text = try await SleepExporter(store: store).export(
                selection, side: bedSide, format: format, includeEpochs: epochs, timeZone: zone)
            if let output {
                try OutputFile.write(Data(text.utf8), to: output, atomically: true)
            } else {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
        } catch let error as ExportError {
            throw CommandFailure(error.description)
        } catch let error as StoreError {
            throw CommandFailure(error.description)
        }
    }

    func zone() throws(ExportError) -> TimeZone? {
        guard let tz else { return nil }
        guard let zone = TimeZone(identifier: tz) else { throw .unknownTimeZone(tz) }
        return zone
    }

    func bedSide() throws -> BedSide? {
        guard let side else { return nil }
        guard let bedSide = BedSide(rawValue: side.lowercased()) else {
            throw ValidationError("unknown side '\(side)' (use left or right)")
        }
        return bedSide
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
