import Foundation
import Hub
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import SleepStore
import Synchronization

/// The hub's local API as a service of `podbridge run`'s ServiceGroup: REST under
/// `/api/v1`, the live streams, `/metrics` and the dashboard, on `api.listen`
/// (docs/api.md). It reads the store and the bus's `HubState`, and commands the pod only
/// through `HubControl`.
package struct HubAPIService: Service {
    let configuration: HubConfiguration
    let store: NightStore
    let bus: HubBus
    let control: HubControl
    let reporter: HubReporter
    let clock: HubClock
    let clients: LiveClients
    let onListening: @Sendable (Int) -> Void
    let limits: ConnectionLimits
    /// HomeKit's setup code and QR code for the dashboard (`GET /api/v1/homekit`); nil while HomeKit is off.
    let homekit: HomeKitSetupBoard?

    /// - Parameters:
    ///   - clientQueue: events buffered per live client before the oldest are dropped.
    ///   - clientMaxBehind: events a live client may miss without any write getting through
    ///     before it is disconnected.
    ///   - clientSendBuffer: bytes a live client's socket and channel may hold unsent.
    ///   - onListening: called with the bound port once the server accepts connections.
    package init(configuration: HubConfiguration, store: NightStore, bus: HubBus, control: HubControl,
                reporter: HubReporter, clock: HubClock = .system, clientQueue: Int = 256, clientMaxBehind: Int = 512,
                clientSendBuffer: Int = 32 * 1024, onListening: @escaping @Sendable (Int) -> Void = { _ in },
                homekit: HomeKitSetupBoard? = nil) {
        self.homekit = homekit
        self.configuration = configuration
        self.store = store
        self.bus = bus
        self.control = control
        self.reporter = reporter
        self.clock = clock
        self.clients = LiveClients(bus: bus, queueSize: clientQueue, maxBehind: clientMaxBehind, sendBuffer: clientSendBuffer)
        self.onListening = onListening
        var limits = ConnectionLimits()
        limits.idleTimeout = .milliseconds(Int64((configuration.api.idleTimeoutSeconds * 1000).rounded()))
        self.limits = limits
    }

    /// The live clients attached now and what they missed (also on `/metrics`).
    package var liveStats: LiveClientStats { clients.stats }

    package func run() async throws {
        let settings = configuration.api
        // Checked again here, not only when the configuration is read: no path starts an open
        // API, and no other site's page reads one without a token.
        let address = try settings.listenAddress()
        let token = settings.requiredToken
        let origins = try settings.allowedWebOrigins()
        if let weak = settings.weakTokenWarning { reporter.warning(weak) }
        let metrics = APIMetrics()
        let router = try makeRouter(token: token, listenHost: address.host, allowedOrigins: origins, metrics: metrics)
        let listening = Flag()
        let reporter = self.reporter
        let onListening = self.onListening
        // Hummingbird's HTTP/1 with WebSocket upgrade (what `.http1WebSocketUpgrade(webSocketRouter:)`
        // builds), with an idle timeout between requests, and guarded until each connection's
        // first request (ConnectionGuard): a connection that never sends a whole request is
        // closed after the idle timeout and at once on shutdown, and one the parser refuses is
        // answered and closed.
        let limits = self.limits
        let connections = OpenConnections()
        let webSocketResponder = router.buildResponder()
        let server = HTTPServerBuilder { responder in
            GuardedHTTPChannel(
                inner: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: .init(http1: .init(idleTimeout: .init(limits.idleTimeout)), ws: .init())),
                limits: limits, connections: connections)
        }
        let app = Application(
            router: AnsweringHead(router: router),
            server: server,
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "podbridge",
                                 availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections,
                                                                                           logger: reporter.logger)),
            onServerRunning: { channel in
                listening.set()
                let port = channel.localAddress?.port ?? address.port
                let shown = address.host == "0.0.0.0" || address.host == "::" ? "127.0.0.1" : address.host
                reporter.event("dashboard and API at http://\(shown.contains(":") ? "[\(shown)]" : shown):\(port)/"
                               + (token == nil ? "" : " (bearer token required)"))
                onListening(port)
            },
            logger: reporter.logger)
        let clients = self.clients
        let bus = self.bus
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await metrics.follow(bus) }
            group.addTask { await clients.watch() }
            group.addTask {
                try await withGracefulShutdownHandler {
                    do {
                        try await app.run()
                    } catch let error as IOError where !listening.isSet {
                        throw ListenError(address: settings.listen, errno: error.errnoCode)
                    } catch is SocketAddressError.UnknownHost where !listening.isSet {
                        throw ListenError(address: settings.listen, errno: nil)
                    } catch SocketAddressError.unknown where !listening.isSet {
                        throw ListenError(address: settings.listen, errno: nil)
                    }
                } onGracefulShutdown: {
                    clients.closeAll()
                    // Connections between requests and those with no whole request yet close
                    // as the server quiesces; whatever is still open after the grace (a client
                    // that stopped reading its answer) is closed too, so the hub stops promptly.
                    Task {
                        try? await Task.sleep(for: limits.shutdownGrace)
                        connections.closeAll()
                    }
                }
            }
            // The server ends on graceful shutdown (or fails to bind); the metrics feed and the live
            // clients' watchdog with it.
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// - Parameter allowedOrigins: `api.allowedOrigins` as browsers send them; empty: no CORS.
    func makeRouter(token: String?, listenHost: String, allowedOrigins: Set<String>,
                    metrics: APIMetrics) throws -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        let statics = try StaticRoutes()
        let methodNotAllowed = try MethodNotAllowedMiddleware<APIRequestContext>(
            openAPI: statics.openAPI, extra: ["/": ["GET"], "/dashboard/{file}": ["GET"]])
        // Order matters: errors become JSON outermost, so auth failures and 404s are JSON too;
        // CORS outside that, so those JSON errors carry its header, and before the token check,
        // which a preflight (no token) would fail.
        router.add(middleware: MetricsMiddleware(metrics: metrics, knownPaths: methodNotAllowed,
                                                 upgradeRoutes: [LiveStreamRoutes.webSocketRoute]))
        if !allowedOrigins.isEmpty {
            router.add(middleware: AllowedOriginsMiddleware(origins: allowedOrigins, methods: methodNotAllowed.methods))
        }
        router.add(middleware: JSONErrorMiddleware())
        if let token {
            router.add(middleware: BearerAuthMiddleware(token: token))
        } else {
            router.add(middleware: LoopbackOnlyMiddleware(listenHost: listenHost))
        }
        // A known path with another method: 405 with `Allow` (after auth: no token, no map of the API).
        router.add(middleware: methodNotAllowed)
        HealthRoutes(store: store, bus: bus).register(on: router)
        statics.register(on: router)
        router.get("metrics") { [store, bus, clients] _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            let text = await metrics.render(store: store, clients: clients, bus: bus)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        let v1 = router.group("api/v1")
        PodRoutes(bus: bus, control: control, store: store).register(on: v1)
        NightRoutes(store: store, timeZone: configuration.hubTimeZone, clock: clock).register(on: v1)
        ScheduleRoutes(store: store, control: control).register(on: v1)
        PresencePowerRoutes(store: store, settings: configuration.schedule, control: control, clock: clock).register(on: v1)
        LiveStreamRoutes(clients: clients).register(on: v1)
        v1.get("homekit") { [homekit] _, _ in
            guard let setup = homekit?.setup else { throw APIError.notFound("HomeKit is off (homekit.enabled is false)") }
            return try Response.json(setup)
        }
        return router
    }
}

/// Whether the server got as far as listening: an I/O error before that is the bind's.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
