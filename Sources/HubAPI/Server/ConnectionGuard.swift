import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// How long and how many HTTP connections the API keeps (docs/api.md, "Connections").
package struct ConnectionLimits: Sendable {
    /// A connection must send a complete request head within this time of opening, and the
    /// next one within this time of the last answer; otherwise it is closed. A response in
    /// progress (an SSE stream, a WebSocket) is never cut by it.
    package var idleTimeout: Duration
    /// On shutdown, what requests still in progress get before their connections are closed.
    package var shutdownGrace: Duration
    /// Connections served at once; more wait in the kernel's listen queue, so that clients of
    /// the API can never take the descriptors the pod's link, the database and MQTT need.
    package var maxConnections: Int

    package init(idleTimeout: Duration = .seconds(30), shutdownGrace: Duration = .seconds(1), maxConnections: Int = 512) {
        self.idleTimeout = idleTimeout
        self.shutdownGrace = shutdownGrace
        self.maxConnections = maxConnections
    }
}

/// The upgrade handler Hummingbird's HTTP/1 + WebSocket channel starts every connection with.
/// While it is in the pipeline the connection's first request head has not arrived yet: no
/// handler of Hummingbird's watches such a connection (its idle timer and its answer to the
/// server's quiesce come with the first request), so `ConnectionGuard` does.
private typealias FirstRequestHandler = NIOTypedHTTPServerUpgradeHandler<HTTP1WebSocketUpgradeChannel.UpgradeResult>

/// Hummingbird's HTTP/1 channel with WebSocket upgrade, guarded until its first request:
/// `ConnectionGuard` first in the pipeline, `RequestErrorCatcher` last, and every connection
/// known to `OpenConnections` for the shutdown.
struct GuardedHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1WebSocketUpgradeChannel.Value
    let inner: HTTP1WebSocketUpgradeChannel
    let limits: ConnectionLimits
    let connections: OpenConnections

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuard(headTimeout: .init(limits.idleTimeout), logger: logger), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        connections.add(channel)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(RequestErrorCatcher())
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Every open connection of the API, so that the shutdown can end those still open after
/// its grace (a client that stopped reading a response, say) instead of waiting for them.
final class OpenConnections: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        channels.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { [weak self] _ in
            _ = self?.channels.withLock { $0.removeValue(forKey: id) }
        }
    }

    var count: Int { channels.withLock { $0.count } }

    func closeAll() {
        for channel in channels.withLock({ Array($0.values) }) {
            channel.pipeline.fireUserInboundEventTriggered(ConnectionGuard.EndNow())
            channel.close(promise: nil)
        }
    }
}

/// First in each connection's pipeline (it sees the bytes as they come): it gives a new
/// connection `headTimeout` to send its first request head (a connection that sends nothing,
/// or trickles a header now and then, is closed), closes such a connection at once when the
/// server quiesces (on shutdown), and answers a request the HTTP parser refuses with an error
/// status, then closes. From the first request head on, Hummingbird's own handlers take
/// over (`HTTPConnectionStateHandler` with `idleTimeout`, or the WebSocket's ping) and this
/// one passes everything on.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Close now, whatever the connection is doing (`OpenConnections.closeAll`).
    struct EndNow {}

    private enum State {
        /// No complete request head yet.
        case awaitingRequest
        /// Hummingbird's handlers have the connection.
        case passedOn
        /// Ending: answered an unparseable request (the rest of the input is dropped) or timed out.
        case ending
    }

    private let headTimeout: TimeAmount
    private let logger: Logger
    private var state = State.awaitingRequest
    private var timer: Scheduled<Void>?
    /// The start of the first line (to tell an unknown method from bytes that are not HTTP).
    private var firstLine: [UInt8] = []

    init(headTimeout: TimeAmount, logger: Logger) {
        self.headTimeout = headTimeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context: context, in: headTimeout) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context: context, in: headTimeout)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state {
        case .ending:
            return  // after an error answer: read and dropped, so the close sends no reset
        case .awaitingRequest:
            if firstLine.count < 512 && !firstLine.contains(UInt8(ascii: "\n")) {
                let bytes = unwrapInboundIn(data)
                firstLine += bytes.readableBytesView.prefix(512 - firstLine.count)
            }
        case .passedOn:
            break
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ChannelShouldQuiesceEvent:
            // The server is shutting down. Hummingbird ends a connection between requests
            // itself, but one that has not sent a whole request yet would hold the shutdown
            // (and the hub) for as long as its client keeps it open.
            if awaitingFirstRequest(context) || state == .ending {
                end(context: context)
            } else {
                context.fireUserInboundEventTriggered(event)
            }
        case is EndNow:
            if awaitingFirstRequest(context) || state == .ending { end(context: context) }
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Whether the connection still waits for its first request head (Hummingbird's upgrade
    /// handler leaves the pipeline once it has one).
    private func awaitingFirstRequest(_ context: ChannelHandlerContext) -> Bool {
        guard state == .awaitingRequest else { return false }
        if (try? context.pipeline.syncOperations.handler(type: FirstRequestHandler.self)) != nil { return true }
        state = .passedOn
        timer?.cancel()
        timer = nil
        return false
    }

    private func arm(context: ChannelHandlerContext, in delay: TimeAmount) {
        guard timer == nil else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: delay) {
            let (handler, context) = loopBound.value
            handler.timer = nil
            handler.timedOut(context: context)
        }
    }

    private func timedOut(context: ChannelHandlerContext) {
        if state == .ending {
            context.close(promise: nil)
        } else if awaitingFirstRequest(context) {
            logger.debug("no complete request head within \(headTimeout.nanoseconds / 1_000_000) ms: closing the connection")
            end(context: context)
        }
    }

    /// Closes a connection that has no request in progress. The upgrade handler, told that the
    /// input ended, closes the channel and ends Hummingbird's wait for the first request with
    /// `ChannelError.inputClosed`, which it logs at trace level (a plain close ends it as an
    /// "inappropriate operation", logged as an error).
    private func end(context: ChannelHandlerContext) {
        state = .ending
        timer?.cancel()
        timer = nil
        context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        context.close(promise: nil)
    }

    /// Answers a first request the HTTP parser refused, then closes the connection. Returns
    /// false once Hummingbird has the connection (it answers a later bad request with a 400).
    func answer(_ error: HTTPParserError, context: ChannelHandlerContext) -> Bool {
        guard awaitingFirstRequest(context) else { return state == .ending }
        state = .ending
        timer?.cancel()
        timer = nil
        let refusal = Self.refusal(of: error, firstLine: firstLine)
        logger.debug("unparseable request (\(error)): answered \(refusal) and closing")
        let body = refusal.body
        var head = "HTTP/1.1 \(refusal.status.code) \(refusal.status.reasonPhrase)\r\n"
        head += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        var buffer = context.channel.allocator.buffer(capacity: head.utf8.count + body.count)
        buffer.writeString(head)
        buffer.writeBytes(body)
        // Send, stop sending (FIN), and keep reading (and dropping) what the client still
        // sends for a moment: closing with unread input would reset the connection, and the
        // client could lose the answer.
        context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in
            context.close(mode: .output, promise: nil)
        }
        arm(context: context, in: min(headTimeout, .seconds(2)))
        return true
    }

    /// 431 for a head over the size limit; 501 for a well-formed request line with a method
    /// the server does not know; 400 for anything else (bytes that are not HTTP/1: a TLS
    /// handshake, garbage; a bad header or Content-Length).
    static func refusal(of error: HTTPParserError, firstLine: [UInt8]) -> APIError {
        let (status, detail): (HTTPResponse.Status, String) = switch error {
        case .headerOverflow:
            (.requestHeaderFieldsTooLarge, "the request head is larger than the server accepts")
        case .invalidMethod where looksLikeRequestLine(firstLine):
            (.notImplemented, "the method is not one the server knows")
        case .invalidMethod, .invalidVersion, .invalidURL, .invalidConstant:
            (.badRequest, "this is not an HTTP/1.1 request")
        case .invalidContentLength, .unexpectedContentLength:
            (.badRequest, "the request's Content-Length is not valid")
        default:
            (.badRequest, "the request could not be parsed (\(error))")
        }
        return APIError(status, APIError.code(for: status), detail)
    }

    /// `TOKEN SP target SP HTTP/1.x` (the line may be cut short of the version).
    static func looksLikeRequestLine(_ bytes: [UInt8]) -> Bool {
        let line = bytes.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count >= 2, let method = parts.first, !method.isEmpty, method.count <= 32 else { return false }
        let tokenPunctuation = Array("!#$%&'*+-.^_`|~".utf8)
        guard method.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                                  || tokenPunctuation.contains($0) }) else { return false }
        guard parts.count == 3 else { return false }
        return parts[2].starts(with: Array("HTTP/1.".utf8))
    }
}

/// Last in the pipeline until the first request: it hands the HTTP parser's error on a first
/// request to `ConnectionGuard` to answer (Hummingbird's upgrade handler drops it, and the
/// connection used to stay open with no answer).
final class RequestErrorCatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Never

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError,
           let guardHandler = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self),
           let guardContext = try? context.pipeline.syncOperations.context(handler: guardHandler),
           guardHandler.answer(error, context: guardContext) {
            return
        }
        context.fireErrorCaught(error)
    }
}
