import TestSupport
import Foundation
import HubMQTT
import HubMQTTService
import Synchronization
import Testing

/// The libmosquitto client against a real mosquitto on loopback (one broker per test).
@Suite(.serialized) struct MQTTClientTests {
    @Test func publishesRetainedAndReceivesWhatItSubscribedTo() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port, filters: ["t/#"])
        try await listener.waitConnected()
        try listener.publish("t/qos1", "hello", retain: true)
        #expect(await eventually(30) { listener.last("t/qos1")?.text == "hello" })

        // A second client subscribing later gets the retained message, flagged retained.
        let late = try Listener(port: broker.port, filters: ["t/qos1"])
        #expect(await eventually(30) { late.last("t/qos1")?.retain == true })
        #expect(late.last("t/qos1")?.text == "hello")
        await late.stop()
        await listener.stop()
    }

    @Test func reconnectsAfterTheBrokerRestartsAndReportsEachStep() async throws {
        let broker = try TestBroker()
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "reconnect-test",
            reconnectMin: .milliseconds(100), reconnectMax: .milliseconds(400)))
        let events = EventLog()
        let reader = Task { for await e in client.events { events.add(e) } }
        client.start()
        #expect(await eventually(60) { events.count(.connected) == 1 })
        broker.stop()
        #expect(await eventually(60) { events.all.contains { if case .disconnected = $0 { true } else { false } } })
        // While the broker is away, attempts fail and are retried.
        #expect(await eventually(60) { events.all.contains { if case .connectFailed = $0 { true } else { false } } })
        #expect(throws: MQTTError.self) { try client.publish(MQTTMessage(topic: "t", text: "while away")) }
        try broker.start()
        #expect(await eventually(60) { events.count(.connected) == 2 }, "events: \(events.all)")
        await client.stop()
        await reader.value
    }

    @Test func wrongCredentialsAreRefusedWithTheBrokersReasonAndRetried() async throws {
        let broker = try TestBroker(users: ["hub": "s3cret"])
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "auth-test", username: "hub", password: "wrong",
            reconnectMin: .milliseconds(100), reconnectMax: .milliseconds(200)))
        let events = EventLog()
        let reader = Task { for await e in client.events { events.add(e) } }
        client.start()
        #expect(await eventually(60) { events.refusals.count >= 2 }, "events: \(events.all)")
        #expect(events.refusals.first?.contains("authori") == true, "reason: \(String(describing: events.refusals.first))")
        #expect(events.count(.connected) == 0)
        await client.stop()
        await reader.value

        let good = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "auth-test-2", username: "hub", password: "s3cret"))
        let goodEvents = EventLog()
        let goodReader = Task { for await e in good.events { goodEvents.add(e) } }
        good.start()
        #expect(await eventually(60) { goodEvents.count(.connected) == 1 })
        await good.stop()
        await goodReader.value
    }

    @Test func aTLSCAFileThatDoesNotExistIsAClearError() throws {
        #expect(throws: MQTTError.self) {
            _ = try MQTTClient(configuration: MQTTClientConfiguration(host: "127.0.0.1", clientID: "x",
                                                                      caFile: "/nonexistent/ca.pem"))
        }
    }

    /// A clean stop sends what is queued and a DISCONNECT: the broker keeps the last
    /// `online` and does not publish the will. (The will on a death: MQTTHubTests.)
    @Test func aCleanStopFlushesAndLeavesNoWill() async throws {
        let broker = try TestBroker()
        let listener = try Listener(port: broker.port, filters: ["will/#"])
        try await listener.waitConnected()
        let will = MQTTMessage(topic: "will/status", text: "offline", qos: .atLeastOnce, retain: true)
        let clean = try MQTTClient(configuration: MQTTClientConfiguration(host: "127.0.0.1", port: broker.port,
                                                                          clientID: "will-clean", will: will))
        let events = EventLog()
        let reader = Task { for await e in clean.events { events.add(e) } }
        clean.start()
        #expect(await eventually(60) { events.count(.connected) == 1 })
        try clean.publish(MQTTMessage(topic: "will/status", text: "online", qos: .atLeastOnce, retain: true))
        await clean.stop()
        await reader.value
        #expect(await eventually(30) { listener.last("will/status")?.text == "online" })
        try await Task.sleep(for: .seconds(1))
        #expect(listener.all("will/status").map(\.text) == ["online"])
        await listener.stop()
    }

    /// Many clients started and stopped, some never started, some stopped twice, some
    /// publishing from other tasks while they stop: no crash, no hang (the handle's lifetime).
    @Test func startingStoppingAndDroppingClientsIsSafe() async throws {
        let broker = try TestBroker()
        for round in 0..<20 {
            let client = try MQTTClient(configuration: MQTTClientConfiguration(
                host: "127.0.0.1", port: broker.port, clientID: "churn-\(round)", reconnectMin: .milliseconds(50)))
            if round % 5 == 4 { continue } // never started: deinit alone
            let reader = Task { for await _ in client.events {} }
            client.start()
            let publisher = Task {
                for i in 0..<200 {
                    try? client.publish(MQTTMessage(topic: "churn/\(round)", text: "\(i)"))
                    await Task.yield()
                }
            }
            try await Task.sleep(for: .milliseconds(Int64(round % 3) * 20))
            await client.stop()
            if round % 2 == 0 { await client.stop() }
            await publisher.value
            await reader.value
        }
    }
}

/// Client events as they came.
final class EventLog: Sendable {
    private let events = Mutex<[MQTTClientEvent]>([])
    func add(_ e: MQTTClientEvent) { events.withLock { $0.append(e) } }
    var all: [MQTTClientEvent] { events.withLock { $0 } }
    func count(_ e: MQTTClientEvent) -> Int { all.filter { $0 == e }.count }
    var refusals: [String] { all.compactMap { if case .refused(let r) = $0 { r } else { nil } } }
}
