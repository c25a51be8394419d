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
    /// 5xx, 408, 429, a network error or a timeout: try again later.
    case retryable(reason: String)

    /// Classifies an HTTP status and response body.
    package static func classify(status: Int, body: Data) -> UploadOutcome {
        let backendID = backendSessionID(in: body)
        switch status {
        case 200...299: return .delivered(backendSessionID: backendID)
        case 409: return .alreadyPresent(backendSessionID: backendID)
        case 408, 429: return .retryable(reason: "HTTP \(status)\(detail(body))")
        case 401, 403: return .unauthorized(reason: "HTTP \(status)\(detail(body))")
        case 400...499: return .rejected(reason: "HTTP \(status)\(detail(body))")
        default: return .retryable(reason: "HTTP \(status)\(detail(body))")
        }
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
