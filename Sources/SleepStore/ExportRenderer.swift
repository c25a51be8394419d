import Foundation
import SleepDomain

/// Output formats of `podbridge export`.
package enum ExportFormat: String, Sendable, CaseIterable {
    /// Apple-Health-shaped stage samples (JSON): one `in_bed` sample per session plus merged stage blocks.
    case blocks
    /// Sessions with metrics and blocks (and epochs with `--epochs`), versioned schema.
    case json
    /// One row per block, or one row per epoch with `--epochs`.
    case csv

    /// Parses a format name, with an error that lists the valid ones.
    package static func parse(_ name: String) throws -> ExportFormat {
        guard let format = ExportFormat(rawValue: name.lowercased()) else { throw ExportError.badFormat(name) }
        return format
    }
}

/// One session with what an export needs of it.
package struct ExportNight: Sendable, Hashable {
    package var session: StoredSession
    package var blocks: [StageBlock]
    /// Epochs (empty unless asked for, or after retention pruned them).
    package var epochs: [EpochRecord]

    package init(session: StoredSession, blocks: [StageBlock], epochs: [EpochRecord]) {
        self.session = session
        self.blocks = blocks
        self.epochs = epochs
    }
}

/// Renders sessions as blocks / JSON / CSV. Pure: the same nights give the same bytes.
/// Times are RFC 3339 with the offset of `timeZone` (or, when nil, of each session's
/// recorded zone); the format is documented in docs/export-format.md.
package enum ExportRenderer {
    /// Version of the JSON documents (`version` field); bumped on any incompatible change.
    package static let schemaVersion = 1

    package static func render(
        _ nights: [ExportNight], format: ExportFormat, includeEpochs: Bool, timeZone: TimeZone?
    ) throws -> String {
        switch format {
        case .blocks: try blocksDocument(nights, timeZone: timeZone)
        case .json: try jsonDocument(nights, includeEpochs: includeEpochs, timeZone: timeZone)
        case .csv: includeEpochs ? epochsCSV(nights, timeZone: timeZone) : blocksCSV(nights, timeZone: timeZone)
        }
    }

    static func calendar(for session: StoredSession, override: TimeZone?) -> LocalCalendar {
        LocalCalendar(timeZone: override ?? TimeZone(identifier: session.timeZoneID) ?? TimeZone(identifier: "UTC")!)
    }

    /// Wake date shown for a session: recomputed in the override zone, else the stored one.
    static func wakeDate(_ session: StoredSession, _ cal: LocalCalendar, override: TimeZone?) -> CalendarDay {
        override == nil ? session.wakeDate : cal.wakeDate(sessionEnd: session.end)
    }

    // MARK: JSON

    struct BlockJSON: Encodable {
        var stage: String
        var value: Int
        var start_time: String
        var end_time: String
        var duration_min: Double
    }

    struct SampleJSON: Encodable {
        var source_id: String
        var pod_serial: String
        var side: String
        var wake_date: String
        var stage: String
        var value: Int
        var start_time: String
        var end_time: String
    }

    struct StageAmountJSON: Encodable {
        var minutes: Double
        var percent: Double
    }

    struct MetricsJSON: Encodable {
        var time_in_bed_min: Double
        var total_sleep_min: Double
        var sleep_efficiency: Double
        var sleep_onset_latency_min: Double
        var waso_min: Double
        var awakenings: Int
        var stages: [String: StageAmountJSON]
        var mean_heart_rate_bpm: Double?
        var mean_hrv_rmssd_ms: Double?
        var mean_breathing_rate_bpm: Double?
        var score: Int
    }

    struct ProbabilitiesJSON: Encodable {
        var awake: Double
        var core: Double
        var deep: Double
        var rem: Double
    }

    struct EpochJSON: Encodable {
        var start_time: String
        var stage: String
        var value: Int
        var probabilities: ProbabilitiesJSON?
        var heart_rate_bpm: Double?
        var hrv_rmssd_ms: Double?
        var breathing_rate_bpm: Double?
        var movement: Double?
    }

    struct SessionJSON: Encodable {
        var source_id: String
        var pod_serial: String
        var side: String
        var wake_date: String
        var time_zone: String
        var start_time: String
        var end_time: String
        var isFinal: Bool
        var sync_status: String
        var backend_session_id: String?
        var metrics: MetricsJSON
        var blocks: [BlockJSON]
        var epochs: [EpochJSON]?

        /// `isFinal` is the document's `final` field.
        enum CodingKeys: String, CodingKey {
            case source_id, pod_serial, side, wake_date, time_zone, start_time, end_time, isFinal = "final"
            case sync_status, backend_session_id, metrics, blocks, epochs
        }
    }

    struct DocumentJSON<Item: Encodable>: Encodable {
        var format: String
        var version: Int
        var sessions: [Item]?
        var samples: [Item]?
    }

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }

    static func jsonDocument(_ nights: [ExportNight], includeEpochs: Bool, timeZone: TimeZone?) throws -> String {
        let sessions = nights.map { night -> SessionJSON in
            let s = night.session
            let cal = calendar(for: s, override: timeZone)
            let m = s.metrics
            return SessionJSON(
                source_id: s.sourceID, pod_serial: s.podSerial, side: s.side.rawValue,
                wake_date: wakeDate(s, cal, override: timeZone).description,
                time_zone: cal.timeZone.identifier,
                start_time: cal.rfc3339(s.start), end_time: cal.rfc3339(s.end),
                isFinal: s.isFinal, sync_status: s.syncStatus.rawValue, backend_session_id: s.backendSessionID,
                metrics: MetricsJSON(
                    time_in_bed_min: m.timeInBedMinutes, total_sleep_min: m.totalSleepMinutes,
                    sleep_efficiency: m.efficiency, sleep_onset_latency_min: m.onsetLatencyMinutes,
                    waso_min: m.wasoMinutes, awakenings: m.awakenings,
                    stages: [
                        "awake": StageAmountJSON(minutes: m.awakeMinutes, percent: m.awakePercent),
                        "core": StageAmountJSON(minutes: m.coreMinutes, percent: m.corePercent),
                        "deep": StageAmountJSON(minutes: m.deepMinutes, percent: m.deepPercent),
                        "rem": StageAmountJSON(minutes: m.remMinutes, percent: m.remPercent),
                    ],
                    mean_heart_rate_bpm: m.meanHeartRate, mean_hrv_rmssd_ms: m.meanHRV,
                    mean_breathing_rate_bpm: m.meanBreathingRate, score: m.score),
                blocks: night.blocks.map {
                    BlockJSON(stage: $0.stage.rawValue, value: $0.stage.healthValue, start_time: cal.rfc3339($0.start),
                              end_time: cal.rfc3339($0.end), duration_min: Double($0.durationSeconds) / 60)
                },
                epochs: includeEpochs ? night.epochs.map { e in
                    EpochJSON(
                        start_time: cal.rfc3339(e.start), stage: e.stage.rawValue, value: e.stage.healthValue,
                        probabilities: e.probabilities.map { ProbabilitiesJSON(awake: $0.awake, core: $0.core, deep: $0.deep, rem: $0.rem) },
                        heart_rate_bpm: e.heartRate, hrv_rmssd_ms: e.hrvRMSSD,
                        breathing_rate_bpm: e.breathingRate, movement: e.movement)
                } : nil)
        }
        return try encode(DocumentJSON(format: "podbridge.sleep", version: schemaVersion, sessions: sessions, samples: nil))
    }

    static func blocksDocument(_ nights: [ExportNight], timeZone: TimeZone?) throws -> String {
        var samples: [SampleJSON] = []
        for night in nights {
            let s = night.session
            let cal = calendar(for: s, override: timeZone)
            let wake = wakeDate(s, cal, override: timeZone).description
            for b in night.blocks {
                samples.append(SampleJSON(
                    source_id: s.sourceID, pod_serial: s.podSerial, side: s.side.rawValue, wake_date: wake,
                    stage: b.stage.rawValue, value: b.stage.healthValue,
                    start_time: cal.rfc3339(b.start), end_time: cal.rfc3339(b.end)))
            }
        }
        return try encode(DocumentJSON(format: "podbridge.stage-blocks", version: schemaVersion, sessions: nil, samples: samples))
    }

    // MARK: CSV

    package static let blocksCSVHeader = "source_id,pod_serial,side,wake_date,stage,value,start_time,end_time,duration_min"
    package static let epochsCSVHeader = "source_id,pod_serial,side,wake_date,start_time,end_time,stage,value,p_awake,p_core,p_deep,p_rem,heart_rate_bpm,hrv_rmssd_ms,breathing_rate_bpm,movement"

    static func blocksCSV(_ nights: [ExportNight], timeZone: TimeZone?) -> String {
        var lines = [blocksCSVHeader]
        for night in nights {
            let s = night.session
            let cal = calendar(for: s, override: timeZone)
            let wake = wakeDate(s, cal, override: timeZone).description
            for b in night.blocks {
                lines.append(csvRow([
                    s.sourceID, s.podSerial, s.side.rawValue, wake, b.stage.rawValue, String(b.stage.healthValue),
                    cal.rfc3339(b.start), cal.rfc3339(b.end), number(Double(b.durationSeconds) / 60),
                ]))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func epochsCSV(_ nights: [ExportNight], timeZone: TimeZone?) -> String {
        var lines = [epochsCSVHeader]
        for night in nights {
            let s = night.session
            let cal = calendar(for: s, override: timeZone)
            let wake = wakeDate(s, cal, override: timeZone).description
            for e in night.epochs {
                let p = e.probabilities
                lines.append(csvRow([
                    s.sourceID, s.podSerial, s.side.rawValue, wake, cal.rfc3339(e.start), cal.rfc3339(e.end),
                    e.stage.rawValue, String(e.stage.healthValue),
                    number(p?.awake), number(p?.core), number(p?.deep), number(p?.rem),
                    number(e.heartRate), number(e.hrvRMSSD), number(e.breathingRate), number(e.movement),
                ]))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Shortest round-tripping decimal, never in exponent form (a spreadsheet or `awk` takes
    /// `0.00000057`, not always `5.7e-07`); an unknown value is an empty cell.
    static func number(_ value: Double?) -> String {
        guard let value else { return "" }
        return value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : plainDecimal(value)
    }

    /// `String(value)`'s digits with the exponent written out: 5.7e-07 → 0.00000057.
    static func plainDecimal(_ value: Double) -> String {
        let text = String(value)
        guard let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }),
              let exponent = Int(text[text.index(after: e)...]) else { return text }
        var mantissa = Substring(text[..<e])
        let sign = mantissa.hasPrefix("-") ? "-" : ""
        if !sign.isEmpty { mantissa = mantissa.dropFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let whole = parts[0]
        let digits = String(whole) + (parts.count > 1 ? String(parts[1]) : "")
        let point = whole.count + exponent
        var plain: String
        if point <= 0 {
            plain = "0." + String(repeating: "0", count: -point) + digits
        } else if point >= digits.count {
            plain = digits + String(repeating: "0", count: point - digits.count)
        } else {
            plain = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
        }
        if plain.contains(".") {
            while plain.hasSuffix("0") { plain.removeLast() }
            if plain.hasSuffix(".") { plain.removeLast() }
        }
        return sign + plain
    }

    /// RFC 4180 row: fields with a comma, quote or line break are quoted, quotes doubled.
    static func csvRow(_ fields: [String]) -> String {
        fields.map { field in
            field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                ? "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : field
        }.joined(separator: ",")
    }
}
