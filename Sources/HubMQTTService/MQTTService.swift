import Foundation
import Hub
import HubMQTT
import Logging
import ServiceLifecycle
import SleepStore

/// MQTT in `podbridge run` (on when `mqtt.host` is set; docs/mqtt.md): a swift-service-lifecycle
/// service that owns the broker connection and the `MQTTBridge`, feeding it the hub's bus
/// (the same one the console and the API read), the client's events and a vitals timer.
/// Commands go through the hub's `HubControl`. On shutdown it publishes `offline` itself and
/// disconnects cleanly; the broker's last will (`offline`, retained) covers a crash.
package struct MQTTService: Service {
    package let bridge: MQTTBridge
    package let client: MQTTClient
    private let bus: HubBus
    private let publishEvery: Duration

    /// - Parameters:
    ///   - dashboardURL: the API's root when the API is on (HA's `configuration_url`).
    ///   - reconnectMin, reconnectMax: the backoff between connection attempts.
    ///   - clock: the hub's clock (the next alarm is counted from its now).
    package init(configuration: HubConfiguration, bus: HubBus, control: HubControl, store: NightStore,
                 reporter: HubReporter, dashboardURL: String? = nil, reconnectMin: Duration = .seconds(1),
                 reconnectMax: Duration = .seconds(30), clock: HubClock = HubClock()) throws(MQTTError) {
        let settings = configuration.mqtt
        let topics = MQTTTopics(base: settings.baseTopic, discoveryPrefix: settings.discoveryPrefix)
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: settings.host ?? "localhost", port: settings.port, clientID: configuration.mqttClientID,
            username: settings.username, password: settings.password, caFile: settings.tls,
            will: MQTTBridge.availabilityMessage(topics, online: false), reconnectMin: reconnectMin, reconnectMax: reconnectMax))
        self.client = client
        self.bus = bus
        self.publishEvery = .milliseconds(Int64(settings.publishEverySeconds * 1000))
        bridge = MQTTBridge(client: client, topics: topics, configuration: configuration, bus: bus, control: control,
                            store: store, reporter: reporter, dashboardURL: dashboardURL, clock: clock)
    }

    package func run() async throws {
        let bridge = self.bridge
        let client = self.client
        let publishEvery = self.publishEvery
        let subscription = bus.subscribe(name: "mqtt")
        await bridge.announceStart()
        client.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in client.events { await bridge.handle(event) }
            }
            group.addTask {
                for await event in subscription { await bridge.handle(event) }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: publishEvery)
                    await bridge.publishVitals()
                }
            }
            // Until a graceful shutdown (or cancellation): then `offline`, a clean disconnect.
            try? await gracefulShutdown()
            subscription.finish()
            await bridge.goingOffline()
            await client.stop()
            group.cancelAll()
        }
    }
}
