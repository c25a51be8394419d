import TestSupport
import Foundation
import SleepDomain
import Hub
import HubAPI
import SleepStore
import Testing

/// `GET /api/v1/presence-power` against a running hub and the virtual pod (firmware only).
@Suite(.serialized) struct APIPresencePowerTests {
    @Test func theRulesInForceAndTheStoredChangesWithTheirReasonsAreShown() async throws {
        let hub = try await APITestHub.start(serial: "API-PRESENCE", speed: 10) { c in
            c.schedule.presencePower.enabled = true
            c.schedule.presencePower.right.away = true
            c.schedule.presencePower.left.offWhenLeftMinutes = 15
        }
        #expect(await eventually { hub.daemon.bus.state.pods["API-PRESENCE"]?.connected == true },
                "never connected; the hub said \(hub.lines.all.suffix(10))")
        try await hub.daemon.store.recordPresencePowerChange(PresencePowerChange(
            podSerial: "API-PRESENCE", side: .left, at: 1_794_905_000, action: "off", until: nil, reason: "bed_left",
            text: "left power off at 07:43: bed empty for 15 min", outcome: "ack"))
        let shown = try await hub.get("/api/v1/presence-power")
        #expect(shown.status == 200, "\(shown.body)")
        let json = try #require(shown.json)
        #expect(json["pod"] as? String == "API-PRESENCE" && json["enabled"] as? Bool == true)
        let sides = try #require(json["sides"] as? [[String: Any]])
        let settings = Dictionary(uniqueKeysWithValues: sides.compactMap { s in
            (s["side"] as? String).map { ($0, s["settings"] as? [String: Any] ?? [:]) }
        })
        #expect(settings["left"]?["offWhenLeftMinutes"] as? Int == 15 && settings["right"]?["away"] as? Bool == true)
        #expect((json["rules"] as? [String: Any])?["maxCommandsPerHour"] as? Int == 6)
        let changes = try #require(json["changes"] as? [[String: Any]])
        #expect(changes.map { $0["text"] as? String } == ["left power off at 07:43: bed empty for 15 min"])
        #expect(changes.first?["reason"] as? String == "bed_left" && changes.first?["at"] as? String == "2026-11-17T08:43:20Z")
        #expect(try await hub.get("/api/v1/presence-power?pod=NOPE").status == 404)
        #expect(try await hub.get("/api/v1/presence-power?side=left").status == 400)
        await hub.stop()
    }
}
