import Foundation
import Hub
import Hummingbird
import SleepDomain
import SleepSchedule
import SleepStore

/// `GET /api/v1/presence-power`: presence-driven power of a pod (docs/schedule.md §5): whether
/// it is on, each side's rules and the safety limits (from the configuration), and the last
/// changes it made with their reasons (from the store).
package struct PresencePowerRoutes: Sendable {
    let store: NightStore
    let settings: HubConfiguration.ScheduleSettings
    let control: HubControl
    let clock: HubClock

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("presence-power") { request, _ in
            let q = try RequestInput.query(request, allowed: ["pod"])
            let serial = try await ScheduleRoutes(store: self.store, control: self.control)
                .knownPod(q["pod"])
            let changes = try await self.store.presencePowerChanges(podSerial: serial, limit: 100)
            let p = self.settings.presencePower
            return try Response.json(PresencePowerBody(
                pod: serial, enabled: p.enabled && self.settings.enabled,
                sides: BedSide.allCases.map { .init(side: $0.rawValue, settings: p[$0]) }, rules: p.rules,
                changes: changes.map { c in
                    .init(side: c.side.rawValue, at: LiveMessage.rfc3339(Double(c.at)), action: c.action,
                          until: c.until.map { LiveMessage.rfc3339(Double($0)) }, reason: c.reason, text: c.text, outcome: c.outcome)
                }))
        }
    }
}

package struct PresencePowerBody: Codable, Sendable {
    package struct Side: Codable, Sendable {
        var side: String
        var settings: PresencePowerSettings
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
    /// `schedule.presencePower.enabled` (and the schedule service on).
    var enabled: Bool
    var sides: [Side]
    var rules: PresencePowerRules
    /// The last 100, oldest first.
    var changes: [Change]
}
