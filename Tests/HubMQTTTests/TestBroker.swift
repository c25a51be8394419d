import TestSupport
import Foundation
import HubMQTT
import HubMQTTService
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real mosquitto broker (Debian's `mosquitto`, installed by scripts/install-deps.sh) on a
/// free loopback port, with its own configuration and optional password file, for one test.
/// It can be stopped and started again on the same port (the broker-restart tests).
///
/// Stopped with SIGKILL and a deadline: the test process (swift-service-lifecycle) may block
/// or ignore SIGTERM, a child inherits that, and a broker that never sees SIGTERM would hang
/// a `waitUntilExit`. Persistence is off, so nothing is lost that a test relies on.
final class TestBroker: Sendable {
    let port: Int
    let directory: String
    private let process = Mutex<Process?>(nil)

    /// - Parameter users: when not empty, anonymous clients are refused and these
    ///   user/password pairs are the only ones accepted.
    init(users: [String: String] = [:]) throws {
        port = try Self.freePort()
        directory = NSTemporaryDirectory() + "podbridge-mqtt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var config = ["listener \(port) 127.0.0.1", "persistence false", "log_dest none"]
        if users.isEmpty {
            config.append("allow_anonymous true")
        } else {
            let passwords = directory + "/passwords"
            guard FileManager.default.createFile(atPath: passwords, contents: nil) else { throw BrokerError("could not create \(passwords)") }
            for (user, password) in users {
                try Self.run("/usr/bin/mosquitto_passwd", ["-b", passwords, user, password])
            }
            config += ["allow_anonymous false", "password_file \(passwords)"]
        }
        try (config.joined(separator: "\n") + "\n").write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts mosquitto and returns once it accepts TCP connections.
    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", directory + "/mosquitto.conf"]
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process.withLock { $0 = p }
        let deadline = Date().addingTimeInterval(30)
        while !Self.accepts(port: port) {
            guard p.isRunning, Date() < deadline else {
                stop()
                throw BrokerError("mosquitto did not start on port \(port)")
            }
            usleep(20_000)
        }
    }

    /// Kills the broker (SIGKILL: no signal disposition can keep it alive) and waits, at most
    /// 10 s, until it is gone and its port is free.
    func stop() {
        guard let p = process.withLock({ p in defer { p = nil }; return p }) else { return }
        kill(p.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(10)
        while p.isRunning && Date() < deadline { usleep(10_000) }
        while Self.accepts(port: port) && Date() < deadline { usleep(10_000) }
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A port the kernel just gave out and took back (free for the broker a moment later).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw BrokerError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(30)
        while p.isRunning && Date() < deadline { usleep(10_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        guard !p.isRunning, p.terminationStatus == 0 else { throw BrokerError("\(tool) \(arguments) failed") }
    }
}

struct BrokerError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// A test's own MQTT client (the same libmosquitto client the hub uses, in another
/// connection), as Home Assistant would be: subscribes and keeps what it receives, newest last.
final class Listener: Sendable {
    let client: MQTTClient
    private let inbox = Inbox()
    private let reader: Task<Void, Never>

    private final class Inbox: Sendable {
        let received = Mutex<[MQTTMessage]>([])
        let connections = Mutex(0)
        let events = Mutex<[MQTTClientEvent]>([])
    }

    init(port: Int, id: String = "test-listener-\(UUID().uuidString.prefix(6))", filters: [String] = ["#"],
         username: String? = nil, password: String? = nil) throws {
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: port, clientID: id, username: username, password: password,
            reconnectMin: .milliseconds(100), reconnectMax: .milliseconds(500)))
        self.client = client
        reader = Task { [inbox] in
            for await event in client.events {
                switch event {
                case .connected:
                    for f in filters + ["podbridge-test/probe/#"] { try? client.subscribe(f, qos: .atLeastOnce) }
                    inbox.connections.withLock { $0 += 1 }
                case .message(let m):
                    inbox.received.withLock { $0.append(m) }
                default:
                    break
                }
                inbox.events.withLock { $0.append(event) }
            }
        }
        client.start()
    }

    var messages: [MQTTMessage] { inbox.received.withLock { $0 } }
    var events: [MQTTClientEvent] { inbox.events.withLock { $0 } }
    var connectionCount: Int { inbox.connections.withLock { $0 } }
    func clear() { inbox.received.withLock { $0.removeAll() } }

    /// The newest message on `topic`.
    func last(_ topic: String) -> MQTTMessage? { messages.last { $0.topic == topic } }
    func all(_ topic: String) -> [MQTTMessage] { messages.filter { $0.topic == topic } }

    /// Waits (generously, for a loaded machine) until it is subscribed.
    func waitConnected() async throws {
        guard await eventually(60, { self.connectionCount > 0 }) else { throw BrokerError("listener never connected") }
        // The SUBACK is not reported: a round trip through the broker proves the subscription.
        let probe = "podbridge-test/probe/\(UUID().uuidString.prefix(6))"
        guard await eventually(30, {
            try? self.client.publish(MQTTMessage(topic: probe, text: "x"))
            return self.last(probe) != nil
        }) else { throw BrokerError("listener never received its probe") }
    }

    func publish(_ topic: String, _ text: String, retain: Bool = false) throws {
        try client.publish(MQTTMessage(topic: topic, text: text, qos: .atLeastOnce, retain: retain))
    }

    func stop() async {
        await client.stop()
        await reader.value
    }
}

/// Polls `condition` every 50 ms until it holds or `seconds` pass. Returns whether it held.
/// Parses a JSON object payload.
func json(_ message: MQTTMessage?) -> [String: Any]? {
    guard let message else { return nil }
    return (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any]
}
