import TestSupport
import Foundation
import Hub
import HubAPI
import Testing

/// 200 SSE and 50 WebSocket clients on one hub, one more that never reads: every reading
/// client keeps getting the newest seconds, the stuck one is counted and cut off, the
/// pipeline's own subscribers lose nothing, and what a client can hold is bounded.
@Suite(.serialized) struct APILoadTests {
    @Test func twoHundredFiftyClientsAndOneThatNeverReads() async throws {
        // Small per-client queues and send buffers so the stuck client is found quickly, at 4× (8 messages a
        // second per client, 2,000 in all): the 250 clients share this debug process with the
        // hub and the virtual pod, and on 2 cores a faster night starves readers for longer
        // than their queue lasts, so they too would be cut off as stuck.
        let hub = try await APITestHub.start(
            serial: "API-LOAD", night: testNight(hours: 2, seed: 41, getsIn: 60, getsOutBeforeEnd: 10 * 60), speed: 4,
            clientQueue: 32, clientMaxBehind: 64, clientSendBuffer: 4096)
        let sse = (0..<200).map { _ in StreamClient.sse(hub.http, base: hub.base, keepMessages: false) }
        let ws = (0..<50).map { _ in StreamClient.ws(base: hub.base, keepMessages: false) }
        let stuck = try NeverReadingClient(port: hub.port)
        let everyone = sse + ws
        #expect(await eventually(180) { hub.api.liveStats.sseClients == 201 && hub.api.liveStats.wsClients == 50 },
                "attached: \(hub.api.liveStats)")

        // The stuck client falls behind, its misses are counted, and it is disconnected.
        // The client count falls just after the disconnect is counted: wait for both (CI once
        // read 201 SSE clients in the moment between them).
        #expect(await eventually(300) {
            hub.api.liveStats.slowDisconnects >= 1 && stuck.closedByServer && hub.api.liveStats.sseClients == 200
        },
                "stats \(hub.api.liveStats); the hub said \(hub.lines.all.suffix(10))")
        let stats = hub.api.liveStats
        #expect(stats.missed >= 64)
        #expect(stats.sseClients == 200 && stats.wsClients == 50, "\(stats)")

        // After that, every reading client still receives new seconds: take the newest data
        // time published now and wait until each client has a message at least that new.
        let newest = try #require(hub.daemon.bus.state.pods["API-LOAD"]?.live.values.map(\.time).max())
        let mark = LiveMessage.rfc3339(newest)
        func caughtUp(_ c: StreamClient) -> Bool { c.newestLiveTime >= mark }
        #expect(await eventually(240) { everyone.allSatisfy(caughtUp) },
                "\(everyone.filter { !caughtUp($0) }.count) clients behind \(mark); \(hub.api.liveStats)")
        // The reading clients lost nothing: no "missed" message reached any of them.
        #expect(everyone.allSatisfy { $0.count(ofType: "missed") == 0 })
        // The pipeline's own subscribers (console, metrics) never dropped an event.
        let own = hub.daemon.bus.subscriberStats().filter { !$0.name.hasPrefix("api-") }
        #expect(!own.isEmpty && own.allSatisfy { $0.dropped == 0 }, "\(own)")
        // /metrics says the same, as counters.
        let before = hub.api.liveStats
        let metrics = try await hub.metrics()
        let after = hub.api.liveStats
        let cut = try #require(metrics.value("podbridge_api_live_slow_disconnects_total"), "\(metrics.text)")
        #expect(cut >= Double(before.slowDisconnects) && cut <= Double(after.slowDisconnects) && cut >= 1)
        let missed = try #require(metrics.value("podbridge_api_live_missed_events_total"))
        #expect(missed >= Double(before.missed) && missed <= Double(after.missed))
        #expect(metrics.value("podbridge_bus_dropped_events_total", ["subscriber": "console"]) == 0)
        // Bounded: no client subscription holds more than its queue (the bus drops the oldest).
        #expect(hub.daemon.bus.subscriberStats().filter { $0.name.hasPrefix("api-") }.count == 250)
        for c in everyone { await c.close() }
        #expect(await eventually(120) { hub.api.liveStats.sseClients == 0 && hub.api.liveStats.wsClients == 0 },
                "\(hub.api.liveStats)")
        await hub.stop()
    }
}
