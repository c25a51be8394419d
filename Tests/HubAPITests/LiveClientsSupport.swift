import AsyncHTTPClient
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import Synchronization

/// A live-stream client for the tests (SSE over a real HTTP connection, or a real WebSocket):
/// keeps every JSON message it received, in order.
final class StreamClient: Sendable {
    /// One parsed message; never changed after parsing, so it can be shared.
    private struct Received: @unchecked Sendable { let object: [String: Any] }
    private let received = Mutex<[Received]>([])
    /// Per type, how many messages arrived; the newest live message's data time.
    private struct Summary { var counts: [String: Int] = [:]; var newestLive = "" }
    private let summary = Mutex(Summary())
    private let ended = Mutex<Bool>(false)
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// False for the load test's hundreds of clients: only the summary is kept, so the test
    /// process's memory does not grow with every message of every client.
    private let keepsMessages: Bool

    private init(keepsMessages: Bool) { self.keepsMessages = keepsMessages }

    /// How many messages of `type` arrived (kept or not).
    func count(ofType type: String) -> Int { summary.withLock { $0.counts[type] ?? 0 } }
    /// The newest `time` of a live message so far (RFC 3339, so it orders as text); "" if none.
    var newestLiveTime: String { summary.withLock { $0.newestLive } }

    var messages: [[String: Any]] { received.withLock { $0.map(\.object) } }
    var hasEnded: Bool { ended.withLock { $0 } }
    func messages(ofType type: String) -> [[String: Any]] { messages.filter { $0["type"] as? String == type } }

    /// - Parameter id: the SSE `id:` of the message, kept as `_id` (none on housekeeping messages).
    private func add(_ text: Substring, id: Substring? = nil) {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return }
        if let id { object["_id"] = String(id) }
        let type = object["type"] as? String ?? "?"
        let time = type == "live" ? object["time"] as? String : nil
        summary.withLock {
            $0.counts[type, default: 0] += 1
            if let time, time > $0.newestLive { $0.newestLive = time }
        }
        guard keepsMessages else { return }
        let r = Received(object: object)
        received.withLock { $0.append(r) }
    }

    /// `GET /api/v1/live/events`, parsed as Server-Sent Events; with `lastEventID` as a
    /// reconnecting EventSource asks.
    static func sse(_ http: HTTPClient, base: String, token: String? = nil, lastEventID: String? = nil,
                    keepMessages: Bool = true) -> StreamClient {
        let client = StreamClient(keepsMessages: keepMessages)
        let t = Task {
            defer { client.ended.withLock { $0 = true } }
            var request = HTTPClientRequest(url: base + "/api/v1/live/events")
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
            guard let response = try? await http.execute(request, timeout: .hours(1)), response.status == .ok else { return }
            var pending = ""
            do {
                for try await buffer in response.body {
                    pending += String(buffer: buffer)
                    while let cut = pending.range(of: "\n\n") {
                        let lines = pending[..<cut.lowerBound].split(separator: "\n")
                        let id = lines.first { $0.hasPrefix("id: ") }?.dropFirst(4)
                        for line in lines where line.hasPrefix("data: ") {
                            client.add(line.dropFirst(6), id: id)
                        }
                        pending.removeSubrange(..<cut.upperBound)
                    }
                }
            } catch {}
        }
        client.task.withLock { $0 = t }
        return client
    }

    /// `GET /api/v1/live/ws`, one JSON message per text frame.
    /// - Parameter after: the `?after=` to resume from (as the client saw it, checked by the hub).
    static func ws(base: String, keepMessages: Bool = true, after: String? = nil) -> StreamClient {
        let client = StreamClient(keepsMessages: keepMessages)
        let url = base.replacingOccurrences(of: "http://", with: "ws://") + "/api/v1/live/ws" + (after.map { "?after=\($0)" } ?? "")
        let t = Task {
            defer { client.ended.withLock { $0 = true } }
            _ = try? await WebSocketClient.connect(url: url, logger: Logger(label: "ws-test")) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    if case .text(let text) = message { client.add(Substring(text)) }
                }
            }
        }
        client.task.withLock { $0 = t }
        return client
    }

    func close() async {
        let t = task.withLock { $0 }
        t?.cancel()
        await t?.value
    }
}

/// A client that connects to the SSE stream and never reads a byte: its receive buffer is as
/// small as the kernel allows, so the server's writes to it stall quickly.
final class NeverReadingClient: Sendable {
    let fd: Int32

    init(port: Int, path: String = "/api/v1/live/events") throws {
        fd = try connectedSocket(port: port) { fd in
            var small: Int32 = 1024
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
    }

    /// True once the server closed the connection (a read would see EOF or a reset). Only
    /// peeks without consuming, after the server gave up on it.
    var closedByServer: Bool {
        var info = tcp_info()
        var size = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &size) == 0 else { return true }
        // CLOSE_WAIT (8) or later: the peer sent FIN or reset.
        return info.tcpi_state != 1  // 1 = ESTABLISHED
    }

    deinit { close(fd) }
}

/// A TCP socket connected to 127.0.0.1:`port`, `configure`d before it connects (a small
/// receive buffer, say).
func connectedSocket(port: Int, configure: (Int32) -> Void = { _ in }) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed: \(errno)") }
    configure(fd)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { close(fd); throw TestFailure("connect failed: \(errno)") }
    return fd
}
