import Foundation
import Hub
import Hummingbird
import SleepDomain
import SleepSchedule
import SleepStore

/// Presence-driven power of a pod (docs/schedule.md §5):
/// - `GET /api/v1/presence-power`: each side's switch, rules, empty nights and away in force
///   (the owner's, over the configuration's), the safety limits, and the last changes it made
///   with their reasons (from the store);
/// - `PUT /api/v1/presence-power/settings`: the owner changes one side (or both): any of the
///   switch and the rules, away, or `reset` to the configuration's. Answers as the GET.
package struct PresencePowerRoutes: Sendable {
    let store: NightStore
    let settings: HubConfiguration.ScheduleSettings
    let control: HubControl
    let clock: HubClock

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("presence-power") { request, _ in
            let q = try RequestInput.query(request, allowed: ["pod"])
            let serial = try await ScheduleRoutes(store: self.store, control: self.control).knownPod(q["pod"])
            return try Response.json(try await self.show(serial: serial))
        }
        group.put("presence-power/settings") { request, context in
            let body = try await RequestInput.json(PresencePowerSettingsBody.self, from: request, context: context,
                                                   allowed: PresencePowerSettingsBody.fields)
            let sides = try ScheduleRoutes.sides(body.side)
            if body.change.isEmpty { throw APIError.badRequest("nothing to change: give at least one setting, or reset") }
            let serial = try await ScheduleRoutes(store: self.store, control: self.control).knownPod(body.pod)
            do throws(HubControl.ControlError) {
                for side in sides { _ = try await self.control.setPresencePower(podSerial: serial, side: side, change: body.change) }
            } catch {
                throw ScheduleRoutes.apiError(error)
            }
            return try Response.json(try await self.show(serial: serial))
        }
    }

    private func show(serial: String) async throws -> PresencePowerBody {
        let changes = try await store.presencePowerChanges(podSerial: serial, limit: 100)
        var sides: [PresencePowerBody.Side] = []
        for side in BedSide.allCases {
            let inForce = await PresencePowerInForce.resolve(store: store, configuration: settings.presencePower,
                                                             podSerial: serial, side: side)
            sides.append(.init(side: side.rawValue, enabled: inForce.enabled && settings.enabled, settings: inForce.settings,
                               emptyNights: inForce.emptyNights, away: inForce.isAway, source: inForce.source))
        }
        return PresencePowerBody(
            pod: serial, enabled: settings.enabled && sides.contains(where: \.enabled), sides: sides,
            rules: settings.presencePower.rules,
            changes: changes.map { c in
                .init(side: c.side.rawValue, at: LiveMessage.rfc3339(Double(c.at)), action: c.action,
                      until: c.until.map { LiveMessage.rfc3339(Double($0)) }, reason: c.reason, text: c.text, outcome: c.outcome)
            })
    }
}

/// `PUT /presence-power/settings`: which side (`left`, `right`, `both`) of which pod, and the change.
struct PresencePowerSettingsBody: Decodable {
    static let fields: Set<String> = ["pod", "side", "enabled", "keepOnWhileOccupied", "keepOnAfterLeavingMinutes",
                                      "keepOnLimitMinutes", "offWhenLeft", "offWhenLeftMinutes", "noShowMinutes",
                                      "awayAfterNights", "away", "reset"]
    var pod: String?
    var side: String
    var change: PresencePowerChangeRequest

    private enum CodingKeys: String, CodingKey { case pod, side }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pod = try c.decodeIfPresent(String.self, forKey: .pod)
        side = try c.decode(String.self, forKey: .side)
        change = try PresencePowerChangeRequest(from: decoder)
    }
}

package struct PresencePowerBody: Codable, Sendable {
    package struct Side: Codable, Sendable {
        var side: String
        /// Presence-driven power acts on this side (its switch, and the schedule service on).
        var enabled: Bool
        var settings: PresencePowerSettings
        /// Power windows in a row that ended with nobody in the side.
        var emptyNights: Int
        /// Away in force: set by the owner, or counted from empty nights.
        var away: Bool
        /// `configuration`, or `set` when the owner changed something at run time.
        var source: String
    }
    package struct Change: Codable, Sendable {
        var side: String
        var at: String
        var action: String
        var until: String?
        var reason: String
        var text: String
        var outcome: String
    }
    var pod: String
    /// Some side has presence-driven power on (and the schedule service is on).
    var enabled: Bool
    var sides: [Side]
    var rules: PresencePowerRules
    /// The last 100, oldest first.
    var changes: [Change]
}
