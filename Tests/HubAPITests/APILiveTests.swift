import TestSupport
import Foundation
import Hub
import HubAPI
import PodProtocol
import Testing

/// The API against the virtual pod playing a night at high speed: real SSE and WebSocket
/// clients receive the live readings the pipeline published and the night's events, and
/// the night appears in the REST API once it ends.
@Suite(.serialized) struct APILiveTests {
    /// `missed` says how many events a client lost when that is known, and why when it helps.
    @Test func theMissedMessageSaysHowManyAndWhy() throws {
        func json(_ message: LiveMessage) throws -> NSDictionary {
            try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(message)) as? NSDictionary)
        }
        #expect(try json(LiveMessage(missed: 3)) == ["type": "missed", "missed": 3])
        #expect(try json(LiveMessage(missed: nil, detail: "restarted")) == ["type": "missed", "detail": "restarted"])
    }

    @Test func liveReadingsEventsAndTheStoredNightReachTheClients() async throws {
        // 150 min of night at 300×: the sleeper gets in after 10 min (the clients are attached
        // by then) and gets up 15 min before the end (the model's longest: 10 % of the night);
        // 5 min out of bed ends the session, with 10 min of data to spare for the presence
        // detector's lag and a loaded machine.
        let hub = try await APITestHub.start(
            serial: "API-LIVE", night: testNight(hours: 150.0 / 60, seed: 31, getsIn: 600, getsOutBeforeEnd: 15 * 60),
            // Client queues sized for 300×: the default 256 events hold minutes of a real-time
            // night but under a second of this one, and a test client on a loaded machine may
            // pause that long (dropping is the load test's subject, not this one's).
            speed: 300, clientQueue: 1 << 14, clientMaxBehind: 1 << 15)
        let recorder = hub.daemon.bus.subscribe(name: "test-recorder", bufferSize: 1 << 20)
        let published = Task { () -> [HubEvent] in
            var all: [HubEvent] = []
            for await event in recorder { all.append(event) }
            return all
        }
        let sse = StreamClient.sse(hub.http, base: hub.base)
        let ws = StreamClient.ws(base: hub.base)

        // Live readings of an occupied side, with a heart rate, on both streams.
        func hasHeartRate(_ c: StreamClient) -> Bool {
            c.messages(ofType: "live").contains { $0["side"] as? String == "left" && $0["heartRate"] != nil }
        }
        #expect(await eventually(120) { hasHeartRate(sse) && hasHeartRate(ws) },
                "SSE got \(sse.messages.count), WS got \(ws.messages.count); the hub said \(hub.lines.all.suffix(10))")
        // Before any night, alarm or reconnect, their counters are already there at 0 (a
        // series that appears with its first event hides that event from rate() and alerts).
        let early = try await hub.metrics()
        for (family, labels) in [("podbridge_nights_stored_total", ["side": "left"]), ("podbridge_alarm_events_total", ["kind": "fired"]),
                                 ("podbridge_wake_events_total", ["kind": "decided"]),
                                 ("podbridge_link_reconnects_total", ["pod": "API-LIVE"]), ("podbridge_link_timeouts_total", ["pod": "API-LIVE"])] {
            #expect(early.value(family, labels) == 0, "\(family)\(labels) missing from \(early.text.prefix(3000))")
        }
        // Every family says what it is (Prometheus and Grafana show it; promtool requires it).
        #expect(early.families.count > 20, "\(early.text.prefix(2000))")
        for family in early.families {
            #expect((early.help(of: family)?.count ?? 0) > 5, "no help for \(family)")
        }
        // GET /live: the newest second per side, as the bus's state has it.
        let live = try await hub.get("/api/v1/live")
        #expect(live.status == 200)
        let sides = try #require(live.json?["sides"] as? [[String: Any]])
        #expect(Set(sides.compactMap { $0["side"] as? String }) == ["left", "right"])
        #expect(sides.allSatisfy { $0["serial"] as? String == "API-LIVE" && $0["time"] is String })

        // The night ends: events and the stored night.
        #expect(await eventually(240) { sse.messages(ofType: "night_finished").contains { $0["side"] as? String == "left" } },
                "no night_finished; the hub said \(hub.lines.all.suffix(15))")
        #expect(await eventually(60) { !ws.messages(ofType: "night_finished").isEmpty })
        for client in [sse, ws] {
            let types = Set(client.messages.compactMap { $0["type"] as? String })
            #expect(types.isSuperset(of: ["hello", "live", "in_bed", "out_of_bed", "night_finished"]), "types \(types)")
        }
        let finished = try #require(sse.messages(ofType: "night_finished").first)
        let wakeDate = try #require(finished["wakeDate"] as? String)
        let nights = try await hub.get("/api/v1/nights?side=left")
        #expect(nights.status == 200)
        let list = try #require(nights.json?["nights"] as? [[String: Any]])
        let night = try #require(list.first { $0["wakeDate"] as? String == wakeDate && $0["final"] as? Bool == true })
        #expect(night["score"] as? Int == finished["score"] as? Int)
        // Without a range: the 14 days up to the newest night, whatever the system's date.
        let recent = try await hub.get("/api/v1/nights")
        #expect(recent.json?["to"] as? String == wakeDate, "\(recent.body.prefix(300))")
        #expect((recent.json?["nights"] as? [[String: Any]])?.contains { $0["wakeDate"] as? String == wakeDate } == true)
        let detail = try await hub.get("/api/v1/nights/\(wakeDate)/left")
        #expect(detail.status == 200)
        let blocks = try #require(detail.json?["blocks"] as? [[String: Any]])
        let epochs = try #require(detail.json?["epochs"] as? [[String: Any]])
        #expect(blocks.contains { $0["stage"] as? String == "in_bed" } && blocks.count > 2)
        #expect(epochs.count > 60 && epochs.contains { $0["heartRate"] is Double && $0["probabilities"] is [String: Any] })
        #expect(try await hub.get("/api/v1/nights/\(wakeDate)/right").status == 404)
        let export = try await hub.get("/api/v1/export?date=\(wakeDate)&side=left&format=csv")
        #expect(export.status == 200 && export.contentType?.hasPrefix("text/csv") == true && export.body.contains(wakeDate))

        // The side's power switched: both streams say so.
        let power = try await hub.request(.POST, "/api/v1/pods/API-LIVE/power", body: #"{"side": "right", "on": true, "level": 40}"#)
        #expect(power.json?["answer"] as? String == "ack", "\(power.body)")
        for client in [sse, ws] {
            #expect(await eventually(60) {
                client.messages(ofType: "power").contains { $0["side"] as? String == "right" && $0["on"] as? Bool == true }
            }, "power messages: \(client.messages(ofType: "power"))")
        }

        // Every live message a client got is a second the pipeline published, with its values.
        recorder.finish()
        var truth: [String: LiveSecond] = [:]
        for case .live(_, let side, let second) in await published.value {
            truth["\(side)@\(LiveMessage.rfc3339(second.time))"] = second
        }
        // The recorder stopped at some moment; a client may hold seconds published after it.
        // Each side's seconds are published in time order, but the two sides interleave
        // loosely (left may publish 00:20:41 before right publishes 00:20:40), so the cut-off
        // is per side.
        var recordedUntil: [String: String] = [:]
        for key in truth.keys {
            let parts = key.split(separator: "@").map(String.init)
            recordedUntil[parts[0]] = max(recordedUntil[parts[0]] ?? "", parts[1])
        }
        for client in [sse, ws] {
            let got = client.messages(ofType: "live")
            #expect(got.count > 20)
            for m in got {
                let side = m["side"] as? String ?? "?", time = m["time"] as? String ?? "?"
                guard time <= recordedUntil[side, default: ""] else { continue }
                let key = "\(side)@\(time)"
                guard let second = truth[key] else { Issue.record("live message \(key) was never published"); break }
                #expect(m["present"] as? Bool == second.present)
                if let hr = second.heartRate { #expect(abs((m["heartRate"] as? Double ?? -1) - hr) < 1e-9) }
            }
        }

        // Pods and metrics reflect the same pipeline.
        let pods = try #require(try await hub.get("/api/v1/pods").json?["pods"] as? [[String: Any]])
        let pod = try #require(pods.first { $0["serial"] as? String == "API-LIVE" })
        #expect(pod["sides"] as? Int == 2 && pod["firmware"] is String)
        #expect(((pod["counters"] as? [String: Any])?["frames"] as? Int ?? 0) > 0)
        let metrics = try await hub.metrics()
        #expect((metrics.value("podbridge_nights_stored_total", ["side": "left"]) ?? 0) >= 1, "\(metrics.text.prefix(2000))")
        #expect(metrics.value("podbridge_side_heart_rate_bpm", ["pod": "API-LIVE", "side": "left"]) != nil)
        #expect((metrics.value("podbridge_api_requests_total", ["route": "/api/v1/nights", "status": "200"]) ?? 0) >= 1)
        // The WebSocket client got a 101, and that is what is counted.
        #expect(metrics.value("podbridge_api_requests_total", ["route": "/api/v1/live/ws", "status": "101"]) == 1, "\(metrics.text)")
        #expect(metrics.value("podbridge_api_requests_total", ["route": "/api/v1/live/ws", "status": "200"]) == nil)
        // Tallies that only grow are counters, so rate() works on them.
        for family in ["podbridge_api_live_missed_events_total", "podbridge_api_live_slow_disconnects_total",
                       "podbridge_bus_dropped_events_total", "podbridge_nights_stored_total", "podbridge_link_frames_total"] {
            #expect(metrics.type(of: family) == "counter", "\(family)")
        }
        #expect(metrics.type(of: "podbridge_outbox_depth") == "gauge")
        await sse.close()
        await ws.close()
        await hub.stop()
    }
}
