import Foundation
import Hub
import SleepDomain
import Hummingbird
import SleepStore

/// `/api/v1/nights`, `/api/v1/nights/{wakeDate}/{side}` and `/api/v1/export`: the stored
/// nights, read from the store only (nothing here writes).
package struct NightRoutes: Sendable {
    let store: NightStore
    let timeZone: TimeZone
    /// The hub's clock (simulated in the demo): "today" is its date, not the system's.
    let clock: HubClock

    /// Without `from`/`to`, the nights waking in the last `defaultDays` days.
    static let defaultDays = 14

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("nights") { request, _ in try await self.list(request) }
        group.get("nights/:wakeDate/:side") { request, context in try await self.detail(request, context) }
        group.get("export") { request, _ in try await self.export(request) }
    }

    func list(_ request: Request) async throws -> Response {
        let q = try RequestInput.query(request, allowed: ["from", "to", "side"])
        let side = try RequestInput.side(q["side"])
        let calendar = LocalCalendar(timeZone: timeZone)
        let today = calendar.localDate(ofUnix: Int64(clock.now().timeIntervalSince1970))
        var to = try RequestInput.date(q["to"], name: "to")
        var from = try RequestInput.date(q["from"], name: "from")
        if to == nil, from == nil {
            // The newest nights the store holds, whatever today is: a hub back from a week
            // away, or a store filled on another clock, still lists its last two weeks of nights.
            let newest = try await store.allSessions(side: side).map(\.wakeDate).max()
            to = newest ?? today
        }
        if to == nil { to = today }
        if from == nil {
            // Noon of `to` minus whole days: a DST change cannot move it off its date.
            from = calendar.localDate(ofUnix: calendar.startOfDay(to!) + 12 * 3600 - Int64(Self.defaultDays - 1) * 86400)
        }
        guard let from, let to else { throw APIError.internalError("no range") }
        guard from <= to else { throw APIError.badRequest("from (\(from)) is after to (\(to))") }
        let sessions = try await store.sessions(wakeDatesFrom: from, to: to, side: side)
        return try Response.json(NightListBody(from: from.description, to: to.description, timeZone: timeZone.identifier, nights: sessions.map(NightSummaryBody.init)))
    }

    func detail(_ request: Request, _ context: APIRequestContext) async throws -> Response {
        let q = try RequestInput.query(request, allowed: ["session"])
        let dateText = context.parameters.get("wakeDate") ?? ""
        guard let date = try RequestInput.date(dateText, name: "wakeDate") else { throw APIError.badRequest("no wake date") }
        guard let side = try RequestInput.side(context.parameters.get("side")) else { throw APIError.badRequest("no side") }
        let sessions = try await store.sessions(wakeDatesFrom: date, to: date, side: side)
        let night: StoredSession
        if let text = q["session"] {
            // One session of several (a nap, a night split by a long time out of bed), by the
            // `id` the list gives: the summary a client shows and its detail are the same session.
            guard let id = Int64(text), id > 0 else { throw APIError.badRequest("session must be a session id from /nights, got '\(text)'") }
            guard let chosen = sessions.first(where: { $0.id == id }) else {
                throw APIError.notFound("no session \(id) of \(side.rawValue) waking on \(date)")
            }
            night = chosen
        } else {
            guard let chosen = Self.night(of: sessions) else { throw APIError.notFound("no night of \(side.rawValue) waking on \(date)") }
            night = chosen
        }
        let wake = try await store.wakeRecord(podSerial: night.podSerial, side: side, wakeDate: date, nightEnd: night.end)
        return try Response.json(NightDetailBody(session: night, blocks: try await store.blocks(sessionID: night.id),
                                         epochs: try await store.epochs(sessionID: night.id), wake: wake))
    }

    /// The night of a day's sessions: the longest final one (a nap, or a night still open after
    /// a finished one, is not the night), else the longest.
    package static func night(of sessions: [StoredSession]) -> StoredSession? {
        let finals = sessions.filter(\.isFinal)
        return (finals.isEmpty ? sessions : finals).max { $0.metrics.timeInBedMinutes < $1.metrics.timeInBedMinutes }
    }

    /// The same selections and formats as `podbridge export`.
    func export(_ request: Request) async throws -> Response {
        let q = try RequestInput.query(request, allowed: ["date", "from", "to", "all", "side", "format", "epochs", "tz"])
        let formatText = q["format"] ?? "json"
        guard let format = ExportFormat(rawValue: formatText) else {
            throw APIError.badRequest("format must be json, csv or blocks, got '\(formatText)'")
        }
        let side = try RequestInput.side(q["side"])
        let epochs = try Self.bool(q["epochs"], name: "epochs")
        // In the API's words (the exporter's own error names the command line's --epochs).
        if epochs && format == .blocks { throw APIError.badRequest("epochs=true applies to the json and csv formats only") }
        let all = try Self.bool(q["all"], name: "all")
        var zone: TimeZone?
        if let tz = q["tz"] {
            guard let z = TimeZone(identifier: tz) else { throw APIError.badRequest("unknown time zone '\(tz)'") }
            zone = z
        }
        let selection: ExportSelection
        switch (try RequestInput.date(q["date"], name: "date"), try RequestInput.date(q["from"], name: "from"),
                try RequestInput.date(q["to"], name: "to"), all) {
        case (let date?, nil, nil, false): selection = .date(date)
        case (nil, let from?, let to?, false): selection = .range(from: from, to: to)
        case (nil, nil, nil, true): selection = .all
        default: throw APIError.badRequest("give one of: date, from and to, or all=true")
        }
        let text: String
        do {
            text = try await SleepExporter(store: store).export(selection, side: side, format: format, includeEpochs: epochs,
                                                          timeZone: zone)
        } catch let error as ExportError {
            switch error {
            case .noSessionsOnDate, .emptyRange, .emptyDatabase: throw APIError.notFound(error.description)
            default: throw APIError.badRequest(error.description)
            }
        }
        var headers = HTTPFields()
        headers[.contentType] = switch format {
        case .json: "application/json; charset=utf-8"
        case .csv: "text/csv; charset=utf-8"
        case .blocks: "text/plain; charset=utf-8"
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func bool(_ text: String?, name: String) throws -> Bool {
        // Exactly the document's enum: what it forbids is refused, not guessed at.
        switch text {
        case nil, "false": return false
        case "true": return true
        default: throw APIError.badRequest("\(name) must be true or false, got '\(text!)'")
        }
    }
}
