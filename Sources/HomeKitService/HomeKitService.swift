import Foundation
import HomeKit
import Hub
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SleepStore

/// HomeKit in `podbridge run` (on when `homekit.enabled`; docs/homekit.md): a HAP server over
/// TCP (SwiftNIO), one task per controller connection feeding `HomeKitBridge`, the hub's bus
/// feeding its events, and the DNS-SD advertisement kept in step with the pairing state.
package struct HomeKitService: Service {
    package let bridge: HomeKitBridge
    private let bus: HubBus
    private let port: Int
    private let reporter: HubReporter
    private let advertiser: HomeKitAdvertiser?

    /// - Parameter board: where the dashboard reads the setup code and QR code (the API's).
    package init(configuration: HubConfiguration, bus: HubBus, control: HubControl, store: NightStore,
                 reporter: HubReporter, board: HomeKitSetupBoard? = nil) throws(HomeKitStateFileError) {
        let file = HomeKitStateFile(stateDirectory: configuration.stateDirectory)
        let state = try file.loadOrCreate()
        let settings = configuration.homekit
        let advertiser = settings.advertise ? HomeKitAdvertiser(name: settings.name, reporter: reporter) : nil
        self.advertiser = advertiser
        bridge = HomeKitBridge(state: state, file: file, name: settings.name, bus: bus, control: control, store: store,
                               reporter: reporter, stateChanged: { state in
                                   advertiser?.update(state)
                                   board?.setup = Self.setup(state)
                               })
        board?.setup = Self.setup(state)
        self.bus = bus
        self.port = settings.port
        self.reporter = reporter
    }

    package func run() async throws {
        let bridge = self.bridge
        let subscription = bus.subscribe(name: "homekit")
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: "0.0.0.0", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let boundPort = server.channel.localAddress?.port ?? port
        await bridge.refreshDatabase()
        let state = await bridge.pairingState
        reporter.event("HomeKit: accessory bridge on port \(boundPort), c# \(state.configurationNumber), "
                       + (state.isPaired ? "paired" : "not paired"))
        await bridge.announceUnpaired()
        advertiser?.start(port: boundPort, state: state)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in subscription { await bridge.handle(event) }
            }
            group.addTask {
                try? await server.executeThenClose { connections in
                    try await withThrowingDiscardingTaskGroup { connectionGroup in
                        for try await connection in connections {
                            connectionGroup.addTask { await Self.serve(connection, bridge: bridge) }
                        }
                    }
                }
            }
            try? await gracefulShutdown()
            subscription.finish()
            advertiser?.stop()
            try? await server.channel.close()
            group.cancelAll()
        }
    }

    /// The dashboard's view of `state`: the code and QR code only while unpaired.
    static func setup(_ state: HAPPairingState) -> HomeKitSetupBoard.Setup {
        guard !state.isPaired else { return .init(paired: true, setupCode: nil, setupPayload: nil, qr: nil) }
        let payload = SetupPayload.uri(code: state.setupCode, setupID: state.setupID)
        return .init(paired: false, setupCode: state.setupCode.formatted, setupPayload: payload, qr: SetupQRCode.rows(payload))
    }

    /// One controller connection: its bytes to the bridge, the bridge's answers and events back.
    private static func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, bridge: HomeKitBridge) async {
        let (id, outbound) = await bridge.open()
        try? await connection.executeThenClose { inbound, writer in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await bytes in outbound { try await writer.write(ByteBuffer(bytes: bytes)) }
                    // The bridge ended the connection (a removed pairing, a bad frame): close it.
                    connection.channel.close(promise: nil)
                }
                for try await buffer in inbound { await bridge.received(Array(buffer.readableBytesView), on: id) }
                group.cancelAll()
            }
        }
        await bridge.close(id)
    }
}
