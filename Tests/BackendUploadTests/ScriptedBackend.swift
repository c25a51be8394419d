import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on 127.0.0.1 that plays the sleep backend for the upload tests.
///
/// By default it behaves like the backend: the first POST of a `source_id` is stored and
/// answered 201 with a session id, a repeat is answered 409. A script per `source_id`
/// overrides the next requests: a status without storing, a dropped connection, or
/// storing and then dropping the connection (the response is lost, the data is not).
final class ScriptedBackend: Sendable {
    enum Action: Sendable {
        case backend
        case status(Int, String)
        /// A status with headers (a redirect's Location, a Retry-After) and a body of that content type.
        case answer(Int, String, headers: [String: String], contentType: String)
        case drop
        case storeThenDrop
    }

    struct Received: Sendable {
        var sourceID: String
        var authorization: String?
        var idempotencyKey: String?
        var body: Data
    }

    struct State {
        var stored: [String: Int] = [:]
        var script: [String: [Action]] = [:]
        var received: [Received] = []
        var inFlight: [String: Int] = [:]
        var maxConcurrentPerSource = 0
        var nextID = 1
    }

    let state = NIOLockedValueBox(State())
    private let channel: any Channel
    let port: Int
    /// Delay before answering, to widen the window in which concurrent posts could overlap.
    let delay: TimeAmount

    init(delay: TimeAmount = .zero) async throws {
        self.delay = delay
        let box = state
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(BackendHandler(state: box, delay: delay))
                }
            }
        channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func script(_ sourceID: String, _ actions: [Action]) {
        state.withLockedValue { $0.script[sourceID, default: []] += actions }
    }

    func preStore(_ sourceID: String) {
        state.withLockedValue { $0.stored[sourceID] = 1 }
    }

    func storedCount(_ sourceID: String) -> Int { state.withLockedValue { $0.stored[sourceID] ?? 0 } }
    var received: [Received] { state.withLockedValue { $0.received } }
    var maxConcurrentPerSource: Int { state.withLockedValue { $0.maxConcurrentPerSource } }

    func shutdown() async throws { try await channel.close() }
}

private final class BackendHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let state: NIOLockedValueBox<ScriptedBackend.State>
    let delay: TimeAmount
    var head: HTTPRequestHead?
    var body: [UInt8] = []

    init(state: NIOLockedValueBox<ScriptedBackend.State>, delay: TimeAmount) {
        self.state = state
        self.delay = delay
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(h):
            head = h
            body = []
        case var .body(buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            handle(context: context, head: head, body: body)
        }
    }

    func handle(context: ChannelHandlerContext, head: HTTPRequestHead, body: [UInt8]) {
        guard head.method == .POST, head.uri == "/api/v1/sleep",
              let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let sourceID = object["source_id"] as? String
        else {
            respond(context: context, status: 400, body: #"{"success":false,"error":"malformed request"}"#)
            return
        }
        let received = ScriptedBackend.Received(
            sourceID: sourceID, authorization: head.headers.first(name: "Authorization"),
            idempotencyKey: head.headers.first(name: "Idempotency-Key"), body: Data(body))
        let action = state.withLockedValue { s -> ScriptedBackend.Action in
            s.received.append(received)
            s.inFlight[sourceID, default: 0] += 1
            s.maxConcurrentPerSource = max(s.maxConcurrentPerSource, s.inFlight[sourceID]!)
            if var queue = s.script[sourceID], !queue.isEmpty {
                let next = queue.removeFirst()
                s.script[sourceID] = queue
                return next
            }
            return .backend
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.finish(context: context, sourceID: sourceID, action: action)
        }
    }

    func finish(context: ChannelHandlerContext, sourceID: String, action: ScriptedBackend.Action) {
        var extra: [String: String] = [:]
        var contentType = "application/json"
        if case let .answer(_, _, headers, type) = action { extra = headers; contentType = type }
        let outcome = state.withLockedValue { s -> (Int, String)? in
            s.inFlight[sourceID, default: 1] -= 1
            func store() -> Int {
                let id = s.nextID
                s.nextID += 1
                s.stored[sourceID, default: 0] += 1
                return id
            }
            switch action {
            case .backend:
                if s.stored[sourceID] != nil {
                    return (409, #"{"success":false,"error":"duplicate source_id"}"#)
                }
                let id = store()
                return (201, #"{"success":true,"data":{"session_id":"srv-\#(id)","time_in_bed":480}}"#)
            case let .status(code, body), let .answer(code, body, _, _):
                return (code, body)
            case .drop:
                return nil
            case .storeThenDrop:
                if s.stored[sourceID] == nil { _ = store() }
                return nil
            }
        }
        if let (status, body) = outcome {
            respond(context: context, status: status, body: body, headers: extra, contentType: contentType)
        } else {
            context.close(promise: nil)
        }
    }

    func respond(context: ChannelHandlerContext, status: Int, body: String, headers extra: [String: String] = [:],
                 contentType: String = "application/json") {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        for (name, value) in extra { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
