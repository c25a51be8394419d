import Foundation
import SleepDomain
import SleepStore

/// The JSON shapes of `/api/v1/nights…` (docs/api.md, openapi.json). Times are RFC 3339 in
/// the night's own zone; durations are minutes.
package struct NightSummaryBody: Codable, Sendable {
    package var id: Int64
    package var podSerial: String
    package var side: String
    package var wakeDate: String
    package var start: String
    package var end: String
    package var timeZone: String
    package var final: Bool
    package var score: Int
    package var metrics: NightMetrics

    package init(_ s: StoredSession) {
        let calendar = LocalCalendar(timeZone: TimeZone(identifier: s.timeZoneID) ?? .gmt)
        id = s.id
        podSerial = s.podSerial
        side = s.side.rawValue
        wakeDate = s.wakeDate.description
        start = calendar.rfc3339(s.start)
        end = calendar.rfc3339(s.end)
        timeZone = s.timeZoneID
        final = s.isFinal
        score = s.metrics.score
        metrics = s.metrics
    }
}

package struct NightListBody: Codable, Sendable {
    package var from: String?
    package var to: String?
    package var nights: [NightSummaryBody]
}

/// One night in full: its summary, stage blocks and 30-second epochs.
package struct NightDetailBody: Codable, Sendable {
    package struct Block: Codable, Sendable {
        package var stage: String
        package var start: String
        package var end: String
        package var minutes: Double
    }

    package struct Epoch: Codable, Sendable {
        package var start: String
        package var stage: String
        package var probabilities: StageProbabilities?
        package var heartRate: Double?
        package var breathingRate: Double?
        package var rmssd: Double?
        package var movement: Double?
    }

    package var night: NightSummaryBody
    package var blocks: [Block]
    package var epochs: [Epoch]

    package init(session: StoredSession, blocks: [StageBlock], epochs: [EpochRecord]) {
        let calendar = LocalCalendar(timeZone: TimeZone(identifier: session.timeZoneID) ?? .gmt)
        night = NightSummaryBody(session)
        self.blocks = blocks.map {
            Block(stage: $0.stage.rawValue, start: calendar.rfc3339($0.start), end: calendar.rfc3339($0.end),
                  minutes: Double($0.durationSeconds) / 60)
        }
        self.epochs = epochs.map {
            Epoch(start: calendar.rfc3339($0.start), stage: $0.stage.rawValue, probabilities: $0.probabilities,
                  heartRate: $0.heartRate, breathingRate: $0.breathingRate, rmssd: $0.hrvRMSSD, movement: $0.movement)
        }
    }
}
