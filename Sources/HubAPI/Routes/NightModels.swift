import Foundation
import SleepDomain
import SleepStore
import Hub

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
    /// The hub's zone (IANA), in which wake dates and the default range are counted: the
    /// dashboard shows the hub's clock times in it, not the browser's.
    package var timeZone: String?
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

    /// How the side's alarm went that morning (smart wake, "until out of bed").
    package struct Wake: Codable, Sendable {
        package var windowStart: String
        package var windowEnd: String
        package var windowMinutes: Int
        package var decidedAt: String?
        package var reason: String?
        package var stage: String?
        package var stageProbability: Double?
        package var movement: Double?
        package var heartRateRise: Double?
        package var minutesBeforeEnd: Double?
        package var triggered: Bool
        package var triggerError: String?
        package var firedAt: String?
        package var repeats: Int
        package var snoozes: Int
        package var outOfBedAt: String?
        package var returnsToBed: Int
        package var summary: String

        package init(_ r: WakeRecord, calendar: LocalCalendar, zone: TimeZone) {
            func finite(_ x: Double?) -> Double? { x.flatMap { $0.isFinite ? $0 : nil } }
            windowStart = calendar.rfc3339(r.windowStart)
            windowEnd = calendar.rfc3339(r.windowEnd)
            windowMinutes = r.windowMinutes
            decidedAt = r.decidedAt.map(calendar.rfc3339)
            reason = r.reason
            stage = r.stage?.rawValue
            stageProbability = finite(r.stageProbability)
            movement = finite(r.movement)
            heartRateRise = finite(r.heartRateRise)
            minutesBeforeEnd = finite(r.minutesBeforeEnd)
            triggered = r.triggered
            triggerError = r.triggerError
            firedAt = r.firedAt.map(calendar.rfc3339)
            repeats = r.repeats
            snoozes = r.snoozes
            outOfBedAt = r.outOfBedAt.map(calendar.rfc3339)
            returnsToBed = r.returnsToBed
            summary = r.summary(in: zone)
        }
    }

    package var night: NightSummaryBody
    package var blocks: [Block]
    package var epochs: [Epoch]
    package var wake: Wake?

    package init(session: StoredSession, blocks: [StageBlock], epochs: [EpochRecord], wake: WakeRecord? = nil) {
        let zone = TimeZone(identifier: session.timeZoneID) ?? .gmt
        let calendar = LocalCalendar(timeZone: zone)
        self.wake = wake.map { Wake($0, calendar: calendar, zone: zone) }
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
