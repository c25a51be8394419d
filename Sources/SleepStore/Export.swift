import Foundation
import SleepDomain

/// Which sessions an export covers, by wake date.
public enum ExportSelection: Sendable, Hashable {
    case date(CalendarDay)
    case range(from: CalendarDay, to: CalendarDay)
    case all
}

/// Why an export produced nothing; each message is fit to print as is.
public enum ExportError: Error, Equatable, CustomStringConvertible {
    case badFormat(String)
    case noSessionsOnDate(CalendarDay, zone: String)
    case emptyRange(from: CalendarDay, to: CalendarDay, zone: String)
    case invertedRange(from: CalendarDay, to: CalendarDay)
    case emptyDatabase
    case epochsNeedJSONOrCSV
    case invalidDate(String)
    case unknownTimeZone(String)

    public var description: String {
        switch self {
        case let .badFormat(name):
            "unknown format '\(name)' (use one of: \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", ")))"
        case let .noSessionsOnDate(date, zone): "no sessions with wake date \(date) (\(zone))"
        case let .emptyRange(from, to, zone): "no sessions with a wake date from \(from) to \(to) (\(zone))"
        case let .invertedRange(from, to): "range start \(from) is after its end \(to)"
        case .emptyDatabase: "the database holds no sessions"
        case .epochsNeedJSONOrCSV: "--epochs applies to the json and csv formats only"
        case let .invalidDate(text): "'\(text)' is not a date (expected YYYY-MM-DD)"
        case let .unknownTimeZone(name): "unknown time zone '\(name)' (use an IANA name such as Europe/Berlin)"
        }
    }
}

/// Exports stored sessions: selects them by wake date, loads blocks (and epochs) and renders.
public struct SleepExporter: Sendable {
    public let store: SleepStore

    public init(store: SleepStore) { self.store = store }

    /// Sessions chosen by `selection` (and `side`), with blocks and optionally epochs.
    /// With `timeZone` nil, wake dates are the ones recorded when each session was stored;
    /// with a zone, they are recomputed from each session's end in that zone.
    /// - Throws: `ExportError` for an inverted or empty selection.
    public func nights(
        _ selection: ExportSelection, side: BedSide?, includeEpochs: Bool, timeZone: TimeZone?
    ) throws -> [ExportNight] {
        let zoneName = timeZone?.identifier ?? "recorded zones"
        let sessions: [StoredSession]
        switch selection {
        case .all:
            sessions = try store.allSessions(side: side)
            if sessions.isEmpty { throw ExportError.emptyDatabase }
        case let .date(date):
            sessions = try select(from: date, to: date, side: side, timeZone: timeZone)
            if sessions.isEmpty { throw ExportError.noSessionsOnDate(date, zone: zoneName) }
        case let .range(from, to):
            guard from <= to else { throw ExportError.invertedRange(from: from, to: to) }
            sessions = try select(from: from, to: to, side: side, timeZone: timeZone)
            if sessions.isEmpty { throw ExportError.emptyRange(from: from, to: to, zone: zoneName) }
        }
        return try sessions.map { s in
            ExportNight(session: s, blocks: try store.blocks(sessionID: s.id),
                        epochs: includeEpochs ? try store.epochs(sessionID: s.id) : [])
        }
    }

    func select(from: CalendarDay, to: CalendarDay, side: BedSide?, timeZone: TimeZone?) throws -> [StoredSession] {
        if let timeZone {
            return try store.sessions(endingIn: LocalCalendar(timeZone: timeZone).span(from: from, to: to), side: side)
        }
        return try store.sessions(wakeDatesFrom: from, to: to, side: side)
    }

    /// The whole export as text.
    public func export(
        _ selection: ExportSelection, side: BedSide? = nil, format: ExportFormat, includeEpochs: Bool = false,
        timeZone: TimeZone? = nil
    ) throws -> String {
        if includeEpochs && format == .blocks { throw ExportError.epochsNeedJSONOrCSV }
        let nights = try nights(selection, side: side, includeEpochs: includeEpochs, timeZone: timeZone)
        return try ExportRenderer.render(nights, format: format, includeEpochs: includeEpochs, timeZone: timeZone)
    }
}
