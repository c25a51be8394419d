import TestSupport
import AsyncHTTPClient
import Foundation
import Hub
import HubAPI
import Logging
import NightModel
import NIOCore
import PodProtocol
import SleepDomain
import Synchronization
import SystemCalls
import NIOHTTP1
import Testing
import VirtualPod

/// A real hub for the API tests: a virtual pod on a pty (firmware only, or playing a night),
/// the daemon assembled as `podbridge run` does, and the API service on a free loopback
/// port, all in this process; plus a real HTTP client.
struct APITestHub {
    let daemon: HubDaemon
    let pod: VirtualPod
    let api: HubAPIService
    let task: Task<Void, any Error>
    let dir: TempDir
    let lines: Lines
    let port: Int
    let http: HTTPClient

    var base: String { "http://127.0.0.1:\(port)" }

    /// - Parameters:
    ///   - night: the night the pod plays; nil for a firmware-only pod (commands, schedule).
    ///   - token: api.token.
    ///   - directory: where the state (store) and the pod's link live; a fresh one if nil.
    ///     Given, it outlives the hub (`stop(keepingState: true)` then another `start`: the
    ///     next night on the same store).
    static func start(serial: String, night: NightConfig? = nil, speed: Double, token: String? = nil,
                      directory: TempDir? = nil,
                      start: Date = Date(timeIntervalSince1970: 1_794_866_400),
                      clientQueue: Int = 256, clientMaxBehind: Int = 512, clientSendBuffer: Int = 32 * 1024,
                      stopSignals: AsyncStream<Int32>? = nil,
                      configure: (inout HubConfiguration) -> Void = { _ in }) async throws -> APITestHub {
        let dir = try directory ?? TempDir()
        let link = dir.path("pod-link")
        let pod: VirtualPod
        // A night's data on time the pod and the hub share, so a loaded machine slows the night
        // instead of losing it (the pod without a night sends nothing to wait for).
        let timeline = night == nil ? nil : PacedTimeline()
        if let night {
            pod = try VirtualPod(configuration: VirtualPodConfiguration(
                identity: PodIdentity(serial: serial, sides: 2, channelsPerSide: night.channelsPerSide), night: night,
                speed: speed, nightStartUnix: start.timeIntervalSince1970, linkPath: link, timeline: timeline))
        } else {
            pod = try VirtualPod(configuration: VirtualPodConfiguration(
                identity: PodIdentity(serial: serial, sides: 2, channelsPerSide: 1),
                speed: speed, replay: [], linkPath: link, stopsAtEnd: false))
        }
        _ = try pod.start()
        var config = HubConfiguration()
        config.stateDirectory = dir.path("state")
        config.timeZone = "UTC"
        config.pod.path = link
        config.pod.reconnectMaxSeconds = 1
        config.sessions.maxGapMinutes = 5
        config.api.listen = "127.0.0.1:0"
        config.api.token = token
        configure(&config)
        let lines = Lines()
        let reporter = HubReporter(logger: Logger(label: "api-test") { _ in LineLogHandler(sink: lines) }, console: false)
        let daemon = try await HubDaemon.assemble(configuration: config,
                                                  clock: HubClock(start: start, speed: speed, timeline: timeline),
                                                  reporter: reporter)
        let port = PortBox()
        let api = HubAPIService(configuration: config, store: daemon.store, bus: daemon.bus, control: daemon.control,
                                reporter: reporter, clock: daemon.clock, clientQueue: clientQueue, clientMaxBehind: clientMaxBehind,
                                clientSendBuffer: clientSendBuffer,
                                onListening: { port.set($0) })
        // `stopSignals`: what `podbridge run` hands the daemon on SIGTERM (a graceful shutdown).
        let task = Task { try await daemon.run(adding: [api], stopSignals: stopSignals) }
        guard await eventually(60, { port.value != nil }), let bound = port.value else {
            task.cancel()
            throw TestFailure("the API never listened; the hub said: \(lines.all.suffix(15))")
        }
        return APITestHub(daemon: daemon, pod: pod, api: api, task: task, dir: dir, lines: lines, port: bound,
                          http: HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration))
    }

    /// For a configuration the check refuses (`configure` makes it so): the API service, built
    /// as if that check had been skipped, refuses to start too, naming `key`, and never listens.
    static func expectNeverStarts(naming key: String, sourceLocation: SourceLocation = #_sourceLocation,
                                  configure: (inout HubConfiguration) -> Void) async throws {
        var config = HubConfiguration()
        let dir = try TempDir()
        defer { dir.cleanup() }
        config.stateDirectory = dir.path("state")
        config.pod.path = dir.path("no-pod")
        configure(&config)
        #expect(throws: ConfigurationError.self, sourceLocation: sourceLocation) { try config.validate() }
        let daemon = try await HubDaemon.assemble(configuration: config, clock: HubClock(start: nil, speed: 1),
                                                  reporter: HubReporter(logger: .init(label: "t"), console: false))
        let listened = PortBox()
        let api = HubAPIService(configuration: config, store: daemon.store, bus: daemon.bus, control: daemon.control,
                                reporter: HubReporter(logger: .init(label: "t"), console: false), onListening: { listened.set($0) })
        await #expect(sourceLocation: sourceLocation) { try await api.run() } throws: { error in
            error is ConfigurationError && "\(error)".contains(key)
        }
        #expect(listened.value == nil, sourceLocation: sourceLocation)
        try daemon.store.close()
    }

    /// The tests' HTTP client: every SSE stream holds a connection for as long as it lasts, so
    /// the pool must allow as many connections as the tests open streams (the default of 8 per
    /// host would queue the 9th stream behind the first eight forever).
    static var clientConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 512)
        return configuration
    }

    func stop(keepingState: Bool = false) async {
        try? await http.shutdown()
        task.cancel()
        _ = await task.result
        pod.stop()
        if !keepingState { dir.cleanup() }
    }

    struct Answer {
        var status: Int
        var body: String
        var contentType: String?
        var headers: HTTPHeaders = [:]
        /// The body as a JSON object (nil if it is not one).
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] }
    }

    /// - Parameter headers: further request headers (a page's `Origin`).
    func request(_ method: HTTPMethod, _ path: String, body: String? = nil, token: String? = nil,
                 contentType: String = "application/json", headers: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return Answer(status: Int(response.status.code), body: String(buffer: bytes),
                      contentType: response.headers.first(name: "content-type"), headers: response.headers)
    }

    func get(_ path: String, token: String? = nil) async throws -> Answer { try await request(.GET, path, token: token) }

    /// `/metrics` read as Prometheus does: each sample's value by its family and labels.
    func metrics(token: String? = nil) async throws -> Metrics {
        let answer = try await get("/metrics", token: token)
        guard answer.status == 200 else { throw CancellationError() }
        return Metrics(text: answer.body)
    }

    struct Metrics {
        let text: String

        /// Every family named by a `# TYPE` line.
        var families: [String] {
            text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) }
        }

        /// The family's `# TYPE` (counter, gauge).
        func type(of family: String) -> String? { comment("TYPE", of: family) }

        /// The family's `# HELP` text.
        func help(of family: String) -> String? { comment("HELP", of: family) }

        private func comment(_ kind: String, of family: String) -> String? {
            let prefix = "# \(kind) \(family) "
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        }

        /// The sample of `family` with exactly these labels, in any order; nil if there is none.
        func value(_ family: String, _ labels: [String: String] = [:]) -> Double? {
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let parts = line.split(separator: " ")
                guard parts.count == 2 else { continue }
                let series = parts[0]
                let name = series.prefix { $0 != "{" }
                guard name == family else { continue }
                var found: [String: String] = [:]
                if let open = series.firstIndex(of: "{") {
                    for pair in series[series.index(after: open)..<series.index(before: series.endIndex)].split(separator: ",") {
                        let kv = pair.split(separator: "=", maxSplits: 1)
                        if kv.count == 2 { found[String(kv[0])] = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
                    }
                }
                if found == labels { return Double(parts[1]) }
            }
            return nil
        }
    }
}

/// The bound port, set from the server's start callback.
final class PortBox: Sendable {
    private let port = Mutex<Int?>(nil)
    var value: Int? { port.withLock { $0 } }
    func set(_ p: Int) { port.withLock { $0 = p } }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

struct TempDir: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hubapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func cleanup() { try? FileManager.default.removeItem(at: url) }
}

/// Every line the hub reported, to show on failure.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ s: String) { lines.withLock { $0.append(s) } }
    var all: [String] { lines.withLock { $0 } }
}

struct LineLogHandler: LogHandler {
    let sink: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { sink.append("\(event.level): \(event.message)") }
}

/// A night for the live tests: a sleeper on the left getting in after `getsIn` seconds.
func testNight(hours: Double, seed: UInt64, getsIn: Double, getsOutBeforeEnd: Double,
               right: SideConfig = .empty) -> NightConfig {
    let sleeper = SideConfig(sleeper: SleeperProfile(getsIn: getsIn, getsOutBeforeEnd: getsOutBeforeEnd, bathroomTrip: false))
    return NightConfig(seed: seed, duration: hours * 3600, sides: [sleeper, right], noise: .normal,
                       pumpVibration: true, channelsPerSide: 2)
}
