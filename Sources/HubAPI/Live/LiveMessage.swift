import Foundation
import Hub
import PodProtocol

/// One message of the live streams (SSE `data:` line, one WebSocket text frame): the hub's
/// events as flat JSON with a `type` (docs/api.md lists them). Pure.
package struct LiveMessage: Codable, Sendable, Equatable {
    package var type: String
    /// The event's number on the hub's bus, on the WebSocket (SSE carries it as its `id:`
    /// line); what `?after=` takes to resume. None on `hello` and `missed`.
    package var id: UInt64?
    package var serial: String?
    package var side: String?
    /// RFC 3339 (UTC) of what happened; for `live`, the data's own second.
    package var time: String?
    // live
    package var present: Bool?
    package var heartRate: Double?
    package var breathingRate: Double?
    package var movement: Double?
    package var quality: Double?
    // pod_connected / pod_disconnected
    package var firmware: String?
    package var endpoint: String?
    package var reason: String?
    // stage
    package var stage: String?
    // power
    package var on: Bool?
    // alarm, schedule_pushed
    package var kind: String?
    package var command: String?
    package var outcome: String?
    package var status: String?
    package var attempt: Int?
    package var argument: Int?
    package var detail: String?
    // night_finished
    package var wakeDate: String?
    package var start: String?
    package var end: String?
    package var score: Int?
    package var totalSleepMinutes: Double?
    package var timeInBedMinutes: Double?
    package var meanHeartRate: Double?
    // wake (smart wake; `kind`, `reason`, `stage`, `movement`, `start`/`end` = the window, `detail`)
    package var windowMinutes: Int?
    package var stageProbability: Double?
    package var heartRateRise: Double?
    package var minutesBeforeEnd: Double?
    package var triggered: Bool?
    package var firedAt: String?
    package var repeats: Int?
    package var snoozes: Int?
    package var outOfBedAt: String?
    package var returnsToBed: Int?
    // stream housekeeping: `hello` on connect, `missed` after a gap
    package var missed: Int?

    package init(type: String) { self.type = type }

    /// `missed`: events this client will not get, `count` of them when known, and why.
    package init(missed count: Int?, detail: String? = nil) {
        self.init(type: "missed")
        missed = count
        self.detail = detail
    }

    /// The stream message for a bus event; nil for events that only feed `/pods` and
    /// `/metrics` (clock anchors, link counters).
    package init?(_ event: HubEvent) {
        switch event {
        case .live(let serial, let side, let s):
            self.init(type: "live")
            self.serial = serial
            self.side = side.description
            time = Self.rfc3339(s.time)
            present = s.present
            heartRate = Self.finite(s.heartRate)
            breathingRate = Self.finite(s.breathingRate)
            movement = Self.finite(s.movement)
            quality = Self.finite(s.quality)
        case .podConnected(let pod, let endpoint, let at):
            self.init(type: "pod_connected")
            serial = pod.serial
            firmware = pod.firmware
            self.endpoint = endpoint
            time = Self.rfc3339(at.timeIntervalSince1970)
        case .podDisconnected(let serial, let reason, let at):
            self.init(type: "pod_disconnected")
            self.serial = serial
            self.reason = reason
            time = Self.rfc3339(at.timeIntervalSince1970)
        case .linkProblem(let detail, let at):
            self.init(type: "link_problem")
            self.detail = detail
            time = Self.rfc3339(at.timeIntervalSince1970)
        case .presence(let serial, let side, let inBed, let at):
            self.init(type: inBed ? "in_bed" : "out_of_bed")
            self.serial = serial
            self.side = side.description
            time = Self.rfc3339(at.timeIntervalSince1970)
        case .preliminaryStage(let serial, let side, let stage, let epochStart):
            self.init(type: "stage")
            self.serial = serial
            self.side = side.description
            self.stage = stage.rawValue
            time = Self.rfc3339(epochStart.timeIntervalSince1970)
        case .alarm(let a):
            self.init(type: "alarm")
            serial = a.serial
            side = a.side?.description
            kind = a.kind.rawValue
            argument = a.argument
            detail = a.text
            time = Self.rfc3339(a.at.timeIntervalSince1970)
        case .schedulePushed(let p):
            self.init(type: "schedule_pushed")
            serial = p.serial
            command = p.command
            detail = p.detail
            attempt = p.attempt
            outcome = p.outcome.rawValue
            status = p.status
            time = Self.rfc3339(p.at.timeIntervalSince1970)
        case .nightFinished(let n):
            self.init(type: "night_finished")
            serial = n.serial
            side = n.side.description
            wakeDate = n.wakeDate
            start = Self.rfc3339(n.start.timeIntervalSince1970)
            end = Self.rfc3339(n.end.timeIntervalSince1970)
            score = n.metrics.score
            totalSleepMinutes = n.metrics.totalSleepMinutes
            timeInBedMinutes = n.metrics.timeInBedMinutes
            meanHeartRate = n.metrics.meanHeartRate
        case .wake(let w):
            self.init(type: "wake")
            serial = w.serial
            side = w.side.description
            kind = w.kind.rawValue
            detail = w.text
            time = Self.rfc3339(w.at.timeIntervalSince1970)
            let r = w.record
            wakeDate = r.wakeDate.description
            start = Self.rfc3339(Double(r.windowStart))
            end = Self.rfc3339(Double(r.windowEnd))
            windowMinutes = r.windowMinutes
            reason = r.reason
            stage = r.stage?.rawValue
            stageProbability = Self.finite(r.stageProbability)
            movement = Self.finite(r.movement)
            heartRateRise = Self.finite(r.heartRateRise)
            minutesBeforeEnd = Self.finite(r.minutesBeforeEnd)
            triggered = r.triggered
            firedAt = r.firedAt.map { Self.rfc3339(Double($0)) }
            repeats = r.repeats
            snoozes = r.snoozes
            outOfBedAt = r.outOfBedAt.map { Self.rfc3339(Double($0)) }
            returnsToBed = r.returnsToBed
        case .powerSet(let serial, let side, let on, _), .powerReported(let serial, let side, let on):
            self.init(type: "power")
            self.serial = serial
            self.side = side.description
            self.on = on
        case .presencePower(let p):
            self.init(type: "presence_power")
            serial = p.serial
            side = p.side.description
            kind = p.action
            reason = p.reason
            detail = p.text
            outcome = p.outcome
            end = p.until.map { Self.rfc3339($0.timeIntervalSince1970) }
            time = Self.rfc3339(p.at.timeIntervalSince1970)
        case .presencePowerSettings(let serial, let side, let p):
            // The dashboard reloads GET /presence-power on it.
            self.init(type: "presence_power_settings")
            self.serial = serial
            self.side = side.description
            self.on = p.enabled
            detail = "presence-driven power \(p.enabled ? "on" : "off")\(p.isAway ? ", away" : "")"
        case .clockSet, .linkCounters, .scheduleAcknowledged, .wakeSettings:
            return nil
        }
    }

    package func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(self), as: UTF8.self)) ?? "{\"type\":\"error\"}"
    }

    /// JSON has no NaN or infinity: such a reading is left out.
    package static func finite(_ x: Double?) -> Double? { x.flatMap { $0.isFinite ? $0 : nil } }

    package static func rfc3339(_ unix: Double) -> String {
        Date(timeIntervalSince1970: unix.rounded(.down)).ISO8601Format()
    }
}
