import Foundation
import SleepDomain
import Hub
import Hummingbird
import SleepSchedule
import SleepStore

/// `GET /api/v1/schedule`, `PUT` and `DELETE /api/v1/schedule/manual`: what is in force per
/// side and why (as stored and decided by the hub's schedule service, read through
/// `HubControl`; nothing is inferred here), and the manual schedule through `HubControl`
/// (validated like the CLI, then pushed to the pod).
package struct ScheduleRoutes: Sendable {
    let store: NightStore
    let control: HubControl

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("schedule") { request, _ in
            let q = try RequestInput.query(request, allowed: ["pod"])
            let serial = try await self.knownPod(q["pod"])
            return try Response.json(try await self.show(serial: serial))
        }
        group.put("schedule/manual") { request, context in
            let body = try await RequestInput.json(ManualScheduleBody.self, from: request, context: context,
                                                   allowed: ["pod", "side", "bedtime", "wake", "weekendBedtime", "weekendWake",
                                                             "windowMinutes", "untilOutOfBed"])
            let sides = try Self.sides(body.side)
            if (body.bedtime == nil) != (body.wake == nil) { throw APIError.badRequest("bedtime and wake go together") }
            if body.bedtime == nil, body.weekendBedtime != nil || body.weekendWake != nil {
                throw APIError.badRequest("weekendBedtime and weekendWake need bedtime and wake")
            }
            if body.bedtime == nil, body.windowMinutes == nil, body.untilOutOfBed == nil {
                throw APIError.badRequest("give bedtime and wake, windowMinutes, or untilOutOfBed")
            }
            if let w = body.windowMinutes, !(0...120).contains(w) {
                throw APIError.badRequest("windowMinutes is 0 (off) … 120, got \(w)")
            }
            for (name, value) in [("bedtime", body.bedtime), ("wake", body.wake),
                                  ("weekendBedtime", body.weekendBedtime), ("weekendWake", body.weekendWake)] {
                if let value, !Self.isTime(value) { throw APIError.badRequest("\(name) must be HH:mm (00:00–23:59), got '\(value)'") }
            }
            let serial = try await self.knownPod(body.pod)
            var lines: [String] = []
            do throws(HubControl.ControlError) {
                if body.windowMinutes != nil || body.untilOutOfBed != nil {
                    lines += try await self.control.setWake(podSerial: serial, sides: sides, windowMinutes: body.windowMinutes,
                                                            untilOutOfBed: body.untilOutOfBed)
                }
                if let bedtime = body.bedtime, let wake = body.wake {
                    lines += try await self.control.setManualSchedule(
                        podSerial: serial, sides: sides, bedtime: bedtime, wake: wake,
                        weekendBedtime: body.weekendBedtime, weekendWake: body.weekendWake)
                }
            } catch {
                throw Self.apiError(error)
            }
            return try Response.json(ScheduleChangeBody(pod: serial, sides: sides.map(\.rawValue), lines: lines))
        }
        group.delete("schedule/manual") { request, context in
            let q = try RequestInput.query(request, allowed: ["pod", "side"])
            try await RequestInput.noBody(request, context: context, hint: "give side (and pod) as query parameters: ?side=left")
            let sides = try Self.sides(q["side"] ?? "both")
            let serial = try await self.knownPod(q["pod"])
            let lines: [String]
            do throws(HubControl.ControlError) {
                lines = try await self.control.clearManualSchedule(podSerial: serial, sides: sides)
            } catch {
                throw Self.apiError(error)
            }
            return try Response.json(ScheduleChangeBody(pod: serial, sides: sides.map(\.rawValue), lines: lines))
        }
    }

    /// The pod meant: the one given (which the store must know), else the only one known.
    func knownPod(_ serial: String?) async throws -> String {
        let known = try await store.pods().map(\.serial)
        if let serial {
            guard known.contains(serial) else { throw APIError.notFound("no pod \(serial) is known to this hub") }
            return serial
        }
        switch known.count {
        case 0: throw APIError.notFound("no pod is known to this hub yet")
        case 1: return known[0]
        default: throw APIError.badRequest("several pods are known (\(known.joined(separator: ", "))); give pod")
        }
    }

    static func sides(_ text: String) throws -> [BedSide] {
        switch text {
        case "left": [.left]
        case "right": [.right]
        case "both": [.left, .right]
        default: throw APIError.badRequest("side must be left, right or both, got '\(text)'")
        }
    }

    /// Strict `HH:mm`: two digits each, 00–23 and 00–59 (`25:00`, `7:5`, `07:60` refused).
    static func isTime(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let h = Int(parts[0]), let m = Int(parts[1]) else { return false }
        return (0..<24).contains(h) && (0..<60).contains(m)
    }

    static func apiError(_ error: HubControl.ControlError) -> APIError {
        switch error {
        case .invalidArgument: .badRequest(error.description)
        case .unknownPod: .notFound(error.description)
        case .link: APIError(.gatewayTimeout, "pod_unreachable", error.description)
        case .schedule: .unavailable(error.description)
        }
    }

    func show(serial: String) async throws -> ScheduleBody {
        var sides: [ScheduleBody.SideBody] = []
        let decisions = await control.scheduleDecisions(podSerial: serial)
        for side in BedSide.allCases {
            var body = ScheduleBody.SideBody(side: side.rawValue)
            if let state = try await store.podSchedule(podSerial: serial, side: side) {
                body.inForce = .init(origin: state.origin.rawValue, summary: state.summary, reason: state.reason,
                                     timeZone: state.timeZoneID, setAt: LiveMessage.rfc3339(Double(state.setAt)),
                                     acknowledged: state.acknowledgedAt != nil,
                                     acknowledgedAt: state.acknowledgedAt.map { LiveMessage.rfc3339(Double($0)) },
                                     lines: (try? PodSchedule.fromStoredJSON(state.scheduleJSON))?.lines ?? [])
            }
            if let m = try await store.manualSchedule(podSerial: serial, side: side) {
                body.manual = .init(weekdayBedtime: m.weekdayBedtime, weekdayWake: m.weekdayWake,
                                    weekendBedtime: m.weekendBedtime, weekendWake: m.weekendWake,
                                    setAt: LiveMessage.rfc3339(Double(m.setAt)))
            }
            if let decision = decisions[side] {
                let d = decision.inferredOnly
                body.inference = .init(
                    origin: d.origin.rawValue, summary: d.schedule.summary, reason: d.reason,
                    sessionsOffered: decision.sessionsOffered, napsSkipped: decision.napsSkipped,
                    groups: NightGroup.allCases.map { g in
                        let decision = d.inference.decision(for: g)
                        return .init(group: g.rawValue, source: decision.source.rawValue,
                                     bedtime: decision.times.bedtime.description, wake: decision.times.wake.description,
                                     nightsUsed: decision.estimate?.nightsUsed, nightsDropped: decision.estimate?.nightsDropped,
                                     bedtimeSpreadMinutes: decision.estimate.map { Self.finite($0.bedtime.circularSDMinutes) } ?? nil,
                                     wakeSpreadMinutes: decision.estimate.map { Self.finite($0.wake.circularSDMinutes) } ?? nil,
                                     reason: decision.reason)
                    })
            }
            sides.append(body)
        }
        let pushes = try await store.schedulePushes(podSerial: serial, limit: 200).suffix(20).map {
            ScheduleBody.Push(at: LiveMessage.rfc3339(Double($0.sentAt)), command: $0.command, detail: $0.description,
                              attempt: $0.attempt, outcome: $0.outcome.rawValue, status: $0.status)
        }
        let alarms = try await store.podEvents(podSerial: serial, limit: 200).filter { $0.kind.hasPrefix("alarm_") }.suffix(10).map {
            ScheduleBody.Alarm(at: LiveMessage.rfc3339(Double($0.at)), kind: $0.kind, side: $0.side?.rawValue,
                               detail: $0.description)
        }
        return ScheduleBody(pod: serial, sides: sides, pushes: Array(pushes), alarms: Array(alarms))
    }

    static func finite(_ x: Double) -> Double? { x.isFinite ? (x * 10).rounded() / 10 : nil }
}

struct ManualScheduleBody: Decodable {
    var pod: String?
    var side: String
    var bedtime: String?
    var wake: String?
    /// Smart wake: minutes before the alarm (0 = off), and ringing again while still in bed.
    var windowMinutes: Int?
    var untilOutOfBed: Bool?
    var weekendBedtime: String?
    var weekendWake: String?
}

package struct ScheduleChangeBody: Codable, Sendable {
    package var pod: String
    package var sides: [String]
    /// What `podbridge schedule set|clear` would print.
    package var lines: [String]
}

package struct ScheduleBody: Codable, Sendable {
    package struct InForce: Codable, Sendable {
        var origin: String
        var summary: String
        var reason: String
        var timeZone: String
        var setAt: String
        var acknowledged: Bool
        var acknowledgedAt: String?
        var lines: [String]
    }

    package struct Manual: Codable, Sendable {
        var weekdayBedtime: String
        var weekdayWake: String
        var weekendBedtime: String
        var weekendWake: String
        var setAt: String
    }

    package struct Group: Codable, Sendable {
        var group: String
        var source: String
        var bedtime: String
        var wake: String
        var nightsUsed: Int?
        var nightsDropped: Int?
        /// Circular standard deviation of the kept nights, minutes.
        var bedtimeSpreadMinutes: Double?
        var wakeSpreadMinutes: Double?
        var reason: String
    }

    package struct Inference: Codable, Sendable {
        var origin: String
        var summary: String
        var reason: String
        var sessionsOffered: Int
        var napsSkipped: Int
        var groups: [Group]
    }

    package struct SideBody: Codable, Sendable {
        var side: String
        var inForce: InForce?
        var manual: Manual?
        /// What the inference alone would give now, and why (nights used, mean, spread).
        var inference: Inference?
    }

    package struct Push: Codable, Sendable {
        var at: String
        var command: String
        var detail: String
        var attempt: Int
        var outcome: String
        var status: String?
    }

    package struct Alarm: Codable, Sendable {
        var at: String
        var kind: String
        var side: String?
        var detail: String
    }

    package var pod: String
    package var sides: [SideBody]
    package var pushes: [Push]
    package var alarms: [Alarm]
}
