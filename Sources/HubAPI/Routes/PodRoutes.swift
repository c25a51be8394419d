import Foundation
import SleepDomain
import Hub
import Hummingbird
import PodProtocol
import SleepStore

/// `/api/v1/pods`, `/api/v1/live` (read from the bus's `HubState`) and the commands
/// `/api/v1/pods/{serial}/alarm/snooze|stop` and `/api/v1/pods/{serial}/power` (through
/// `HubControl`, answered with the pod's ack or nack).
package struct PodRoutes: Sendable {
    let bus: HubBus
    let control: HubControl
    let store: NightStore

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("pods") { request, _ in
            _ = try RequestInput.query(request, allowed: [])
            return try Response.json(PodListBody(pods: try await self.pods(),
                                                 linkProblem: self.bus.state.linkProblem.map(LinkProblemBody.init)))
        }
        group.get("live") { request, _ in
            _ = try RequestInput.query(request, allowed: [])
            return try Response.json(self.live())
        }
        group.post("pods/:serial/alarm/snooze") { request, context in
            let body = try await RequestInput.json(SnoozeBody.self, from: request, context: context, allowed: ["side", "seconds"])
            return try await self.command(context, .snooze(side: try Self.side(body.side), seconds: body.seconds ?? 540))
        }
        group.post("pods/:serial/alarm/stop") { request, context in
            let body = try await RequestInput.json(SideBody.self, from: request, context: context, allowed: ["side"])
            return try await self.command(context, .stopAlarm(side: try Self.side(body.side)))
        }
        group.post("pods/:serial/power") { request, context in
            let body = try await RequestInput.json(PowerBody.self, from: request, context: context,
                                                   allowed: ["side", "on", "level"])
            // As the document says, whether the side is switched on or off.
            if let level = body.level, !(1...100).contains(level) {
                throw APIError.badRequest("level must be 1…100 %, got \(level)")
            }
            return try await self.command(context, .power(side: try Self.side(body.side), on: body.on, level: body.level ?? 100))
        }
    }

    /// Every pod the hub has seen since it started (connected or not), then those only the
    /// store remembers (seen by an earlier run).
    func pods() async throws -> [PodBody] {
        let state = bus.state
        var result = state.pods.values.sorted { $0.pod.serial < $1.pod.serial }.map(PodBody.init)
        for record in try await store.pods() where state.pods[record.serial] == nil {
            result.append(PodBody(stored: record))
        }
        return result
    }

    func live() -> LiveBody {
        var sides: [LiveSideBody] = []
        for pod in bus.state.pods.values.sorted(by: { $0.pod.serial < $1.pod.serial }) {
            for side in BedSide.allCases {
                guard let second = pod.live[side] else { continue }
                sides.append(LiveSideBody(serial: pod.pod.serial, side: side.description, connected: pod.connected,
                                          inBed: pod.inBed[side], stage: pod.stage[side]?.rawValue, second: second))
            }
        }
        return LiveBody(sides: sides)
    }

    func command(_ context: APIRequestContext, _ command: HubControl.PodCommand) async throws -> Response {
        let serial = context.parameters.get("serial") ?? ""
        let answer: HubControl.PodAnswer
        do throws(HubControl.ControlError) {
            answer = try await control.send(command, toPod: serial)
        } catch {
            throw ScheduleRoutes.apiError(error)
        }
        switch answer {
        case .ack:
            return try Response.json(CommandAnswerBody(serial: serial, answer: "ack", status: nil, code: nil))
        case .nack(let status, let code):
            return try Response.json(CommandAnswerBody(serial: serial, answer: "nack", status: status, code: code))
        }
    }

    static func side(_ text: String) throws -> BedSide {
        guard let side = BedSide.allCases.first(where: { $0.description == text }) else {
            throw APIError.badRequest("side must be left or right, got '\(text)'")
        }
        return side
    }
}

struct SideBody: Decodable { var side: String }
struct SnoozeBody: Decodable {
    var side: String
    var seconds: Int?
}
struct PowerBody: Decodable {
    var side: String
    var on: Bool
    var level: Int?
}

package struct CommandAnswerBody: Codable, Sendable {
    package var serial: String
    /// `ack` or `nack`.
    package var answer: String
    package var status: String?
    package var code: Int?
}

package struct PodListBody: Codable, Sendable {
    package var pods: [PodBody]
    /// What keeps the hub from using the pod it found, while it lasts.
    package var linkProblem: LinkProblemBody?
}

package struct LinkProblemBody: Codable, Sendable {
    package var detail: String
    package var since: String

    init(_ problem: HubState.LinkProblem) {
        detail = problem.detail
        since = LiveMessage.rfc3339(problem.since.timeIntervalSince1970)
    }
}

package struct PodBody: Codable, Sendable {
    package struct Counters: Codable, Sendable {
        var frames: UInt64
        var bytes: UInt64
        var crcErrors: UInt64
        var malformed: UInt64
        var droppedFrames: UInt64
        var reconnects: UInt64
        var timeouts: UInt64
        var nacks: UInt64
        var podReboots: UInt64
    }

    package struct Clock: Codable, Sendable {
        var set: Bool
        var utcOffsetMinutes: Int?
        var anchorTick: UInt64?
        var anchorTime: String?
    }

    package var serial: String
    package var connected: Bool
    /// When the link came up (connected) or went down (not connected); nil for pods only the
    /// store remembers.
    package var since: String?
    package var lastSeen: String?
    package var firmware: String?
    package var endpoint: String?
    package var disconnectReason: String?
    package var sides: Int?
    package var channelsPerSide: Int?
    package var sampleRate: Int?
    package var bootCount: Int?
    package var counters: Counters?
    package var clock: Clock
    /// Whether each side's power is on, as the pod last acknowledged or reported it (its
    /// status is asked a second after it connects); a side not yet known is left out.
    package var power: SidePower?

    package struct SidePower: Codable, Sendable {
        var left: Bool?
        var right: Bool?
    }

    init(_ s: HubState.PodState) {
        serial = s.pod.serial
        connected = s.connected
        since = LiveMessage.rfc3339(s.since.timeIntervalSince1970)
        firmware = s.pod.firmware
        endpoint = s.endpoint
        disconnectReason = s.lastDisconnectReason
        sides = s.pod.sides
        channelsPerSide = s.pod.piezoChannelsPerSide
        sampleRate = s.pod.sampleRate
        bootCount = s.pod.bootCount
        let c = s.counters
        counters = Counters(frames: c.frames, bytes: c.bytes, crcErrors: c.crcErrors, malformed: c.malformed,
                            droppedFrames: c.droppedFrames, reconnects: c.reconnects, timeouts: c.timeouts,
                            nacks: c.nacks, podReboots: c.podReboots)
        clock = Clock(set: s.clock != nil, utcOffsetMinutes: s.clock.map { Int($0.utcOffsetMinutes) },
                      anchorTick: s.clock?.tick,
                      anchorTime: s.clock.map { LiveMessage.rfc3339(Double($0.unixMillis) / 1000) })
        power = s.power.isEmpty ? nil : SidePower(left: s.power[.left], right: s.power[.right])
    }

    init(stored: PodRecord) {
        serial = stored.serial
        connected = false
        lastSeen = LiveMessage.rfc3339(Double(stored.lastSeen))
        firmware = stored.firmware
        clock = Clock(set: false)
    }
}

package struct LiveSideBody: Codable, Sendable {
    package var serial: String
    package var side: String
    package var connected: Bool
    /// The session tracker's view (nil until it decided).
    package var inBed: Bool?
    /// The preliminary stage of the night under way.
    package var stage: String?
    /// The second's time (the data's clock, RFC 3339) and readings.
    package var time: String
    package var present: Bool
    package var heartRate: Double?
    package var breathingRate: Double?
    package var movement: Double
    package var quality: Double

    init(serial: String, side: String, connected: Bool, inBed: Bool?, stage: String?, second: LiveSecond) {
        self.serial = serial
        self.side = side
        self.connected = connected
        self.inBed = inBed
        self.stage = stage
        time = LiveMessage.rfc3339(second.time)
        present = second.present
        heartRate = LiveMessage.finite(second.heartRate)
        breathingRate = LiveMessage.finite(second.breathingRate)
        movement = second.movement.isFinite ? second.movement : 0
        quality = second.quality.isFinite ? second.quality : 0
    }
}

package struct LiveBody: Codable, Sendable { package var sides: [LiveSideBody] }
