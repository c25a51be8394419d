import TestSupport
import Foundation
import SleepDomain
import Hub
import HubAPI
import SleepStore
import Synchronization
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
        #expect(sides.allSatisfy { $0["source"] as? String == "configuration" && $0["enabled"] as? Bool == true })
        #expect(sides.first { $0["side"] as? String == "right" }?["away"] as? Bool == true)
        #expect((json["rules"] as? [String: Any])?["maxCommandsPerHour"] as? Int == 6)
        let changes = try #require(json["changes"] as? [[String: Any]])
        #expect(changes.map { $0["text"] as? String } == ["left power off at 07:43: bed empty for 15 min"])
        #expect(changes.first?["reason"] as? String == "bed_left" && changes.first?["at"] as? String == "2026-11-17T08:43:20Z")
        #expect(try await hub.get("/api/v1/presence-power?pod=NOPE").status == 404)
        #expect(try await hub.get("/api/v1/presence-power?side=left").status == 400)
        await hub.stop()
    }

    /// `PUT /api/v1/presence-power/settings`: a side's switch and rules changed at run time,
    /// stored over the configuration (so a restarted hub keeps them), told on the live stream,
    /// and every bad request refused with nothing stored.
    @Test func aSidesSwitchAndRulesAreChangedStoredAndRefusedWhenBad() async throws {
        let hub = try await APITestHub.start(serial: "API-PP-SET", speed: 10)
        #expect(await eventually { hub.daemon.bus.state.pods["API-PP-SET"]?.connected == true },
                "never connected; the hub said \(hub.lines.all.suffix(10))")
        // Off by default (the configuration's).
        let before = try #require(try await hub.get("/api/v1/presence-power").json)
        #expect(before["enabled"] as? Bool == false)
        let heard = hub.daemon.bus.subscribe(name: "api-test", bufferSize: 1 << 12)
        let told = Mutex<PresencePowerInForce?>(nil)
        let listener = Task {
            for await event in heard {
                if case .presencePowerSettings(let serial, .left, let p) = event, serial == "API-PP-SET" { told.withLock { $0 = p } }
            }
        }
        let put = try await hub.request(.PUT, "/api/v1/presence-power/settings",
                                        body: #"{"side": "left", "enabled": true, "offWhenLeftMinutes": 20, "away": true}"#)
        #expect(put.status == 200, "\(put.body)")
        let json = try #require(put.json)
        #expect(json["enabled"] as? Bool == true)
        let sides = try #require(json["sides"] as? [[String: Any]])
        let left = try #require(sides.first { $0["side"] as? String == "left" })
        let right = try #require(sides.first { $0["side"] as? String == "right" })
        #expect(left["enabled"] as? Bool == true && left["away"] as? Bool == true && left["source"] as? String == "set")
        #expect((left["settings"] as? [String: Any])?["offWhenLeftMinutes"] as? Int == 20)
        #expect(right["enabled"] as? Bool == false && right["source"] as? String == "configuration")
        // The running hub is told (the service, MQTT and the dashboard follow the bus).
        #expect(await eventually { told.withLock { $0 } != nil })
        heard.finish()
        await listener.value
        let p = told.withLock { $0 }
        #expect(p?.enabled == true && p?.settings.offWhenLeftMinutes == 20 && p?.isAway == true)
        let stored = try await hub.daemon.store.presencePowerSide(podSerial: "API-PP-SET", side: .left)
        #expect(stored?.enabled == true && stored?.settings?.away == true)

        // Both sides at once; then reset the left one to the configuration's.
        #expect(try await hub.request(.PUT, "/api/v1/presence-power/settings", body: #"{"side": "both", "keepOnWhileOccupied": false}"#).status == 200)
        let reset = try await hub.request(.PUT, "/api/v1/presence-power/settings", body: #"{"side": "left", "reset": true}"#)
        let afterReset = try #require((reset.json?["sides"] as? [[String: Any]])?.first { $0["side"] as? String == "left" })
        #expect(afterReset["enabled"] as? Bool == false && afterReset["source"] as? String == "configuration")
        #expect((afterReset["settings"] as? [String: Any])?["keepOnWhileOccupied"] as? Bool == true)
        let rightNow = try #require((reset.json?["sides"] as? [[String: Any]])?.first { $0["side"] as? String == "right" })
        #expect((rightNow["settings"] as? [String: Any])?["keepOnWhileOccupied"] as? Bool == false)

        // Refused, and nothing changes: out of range, unknown field, wrong type, nothing to change, bad side, unknown pod.
        let saved = try await hub.daemon.store.presencePowerSide(podSerial: "API-PP-SET", side: .right)
        for (body, status) in [(#"{"side": "right", "offWhenLeftMinutes": 2}"#, 400),
                               (#"{"side": "right", "awayAfterNights": 31}"#, 400),
                               (#"{"side": "right", "heat": true}"#, 400),
                               (#"{"side": "right", "enabled": "yes"}"#, 400),
                               (#"{"side": "right"}"#, 400),
                               (#"{"side": "middle", "enabled": true}"#, 400),
                               (#"{"pod": "NOPE", "side": "right", "enabled": true}"#, 404)] {
            let answer = try await hub.request(.PUT, "/api/v1/presence-power/settings", body: body)
            #expect(answer.status == status, "\(body): \(answer.status) \(answer.body)")
        }
        #expect(try await hub.daemon.store.presencePowerSide(podSerial: "API-PP-SET", side: .right) == saved)
        await hub.stop()
    }
}
