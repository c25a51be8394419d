import Foundation
import SleepStore
import SleepDomain

/// Body of `POST /api/v1/sleep` (see docs/store.md, "Upload").
///
/// `stages` are the merged awake/core/deep/rem blocks, which tile the session except where
/// it has no data (the link was down: no stage is claimed there); the session's own span (`start_time`–`end_time`) is its in-bed time, so the `in_bed` block is not sent
/// again (the backend would count it twice in its stage summary).
package struct SleepUploadPayload: Codable, Sendable, Hashable {
    package struct Stage: Codable, Sendable, Hashable {
        package var stage: String
        package var start_time: String
        package var end_time: String
    }

    package var source: String
    package var source_id: String
    package var start_time: String
    package var end_time: String
    package var stages: [Stage]

    package init(session: StoredSession, blocks: [StageBlock], source: String) {
        let zone = TimeZone(identifier: session.timeZoneID) ?? TimeZone(identifier: "UTC")!
        let cal = LocalCalendar(timeZone: zone)
        self.source = source
        source_id = session.sourceID
        start_time = cal.rfc3339(session.start)
        end_time = cal.rfc3339(session.end)
        stages = blocks.filter { $0.stage != .inBed }.map {
            Stage(stage: $0.stage.rawValue, start_time: cal.rfc3339($0.start), end_time: cal.rfc3339($0.end))
        }
    }

    package func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

/// What one upload attempt came to. Pure classification of the backend's answer.
package enum UploadOutcome: Sendable, Hashable {
    /// 2xx: stored; the backend's session id when its body had one.
    case delivered(backendSessionID: String?)
    /// 409: the backend already has this `source_id` (an earlier attempt got through).
    case alreadyPresent(backendSessionID: String?)
    /// Another 4xx: the backend refuses this session; retrying will not help.
    case rejected(reason: String)
    /// 401 or 403: the backend does not accept the token. Not the session's fault: the
    /// worker stops the pass and leaves every event queued.
    case unauthorized(reason: String)
    /// A redirect, 404 or 405: the base URL does not lead to the backend's sleep endpoint (a
    /// proxy sending http to https, a wrong path). Not the session's fault either, handled
    /// as `unauthorized`. A redirect is never followed: the client would turn the POST into
    /// a GET, whose 200 from the backend's list read as "stored" while nothing was.
    case misdirected(reason: String)
    /// 5xx, 408, 429, a network error or a timeout: try again later.
    case retryable(reason: String)

    /// Classifies an HTTP status and response body (`location`: a redirect's target).
    package static func classify(status: Int, body: Data, location: String? = nil) -> UploadOutcome {
        let backendID = backendSessionID(in: body)
        switch status {
        case 200...299:
            // The backend answers `{"success": true, "data": {"session_id": …}}`. A 2xx that
            // says it failed, or a page that is not the backend's JSON (a proxy's maintenance
            // page), stored nothing.
            // Delivered when it says `"success": true`, or (without the flag) names the session.
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
            if object?["success"] as? Bool == false { return .rejected(reason: "HTTP \(status) with success false\(detail(body))") }
            if object?["success"] as? Bool == true || (object?["success"] == nil && backendID != nil) {
                return .delivered(backendSessionID: backendID)
            }
            return .retryable(reason: "HTTP \(status) but not the backend's answer\(body.isEmpty ? " (empty)" : detail(body))")
        case 300...399: return .misdirected(reason: "HTTP \(status), a redirect\(location.map { " to \($0)" } ?? "")")
        case 404, 405: return .misdirected(reason: "HTTP \(status)\(detail(body))")
        case 409: return .alreadyPresent(backendSessionID: backendID)
        case 408, 429: return .retryable(reason: "HTTP \(status)\(detail(body))")
        case 401, 403: return .unauthorized(reason: "HTTP \(status)\(detail(body))")
        case 400...499: return .rejected(reason: "HTTP \(status)\(detail(body))")
        default: return .retryable(reason: "HTTP \(status)\(detail(body))")
        }
    }

    /// The seconds a `Retry-After` header asks for (a number of seconds or an HTTP date),
    /// at most a day; nil when there is none or it cannot be read.
    package static func retryAfter(_ value: String?, now: Int64) -> Int64? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int64(value) { return seconds >= 0 ? min(seconds, 86_400) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return min(max(0, Int64(date.timeIntervalSince1970) - now), 86_400)
    }

    /// `data.session_id` of a backend response, if present.
    static func backendSessionID(in body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let data = object["data"] as? [String: Any] else { return nil }
        if let id = data["session_id"] as? String { return id }
        if let id = data["session_id"] as? Int { return String(id) }
        return nil
    }

    /// The backend's error message (`error` / `message` / `error.message`), else the body
    /// text, shortened to 300 characters, as ": <text>"; empty when there is none.
    static func detail(_ body: Data) -> String {
        var text: String?
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            if let message = object["error"] as? String { text = message }
            else if let message = object["message"] as? String { text = message }
            else if let error = object["error"] as? [String: Any], let message = error["message"] as? String { text = message }
        }
        let raw = text ?? String(decoding: body, as: UTF8.self)
        let flat = raw.replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
        guard !flat.isEmpty else { return "" }
        return ": " + (flat.count > 300 ? String(flat.prefix(300)) + "…" : flat)
    }
}
