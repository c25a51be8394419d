import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// `GET /api/v1/live/events` (Server-Sent Events) and `GET /api/v1/live/ws` (WebSocket):
/// the same messages (`LiveMessage`) on both, from `LiveClients`.
package struct LiveStreamRoutes: Sendable {
    let clients: LiveClients

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("live/events") { request, context in
            _ = try RequestInput.query(request, allowed: [])
            let clients = self.clients
            let channel = context.channel
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                var sequence = 0
                try await clients.serve(.sse, channel: channel, keepsAlive: true) { output in
                    switch output {
                    case .message(let message):
                        sequence += 1
                        try await writer.write(ByteBuffer(string: "id: \(sequence)\nevent: \(message.type)\ndata: \(message.json())\n\n"))
                    case .keepAlive:
                        // A comment line: EventSource ignores it, and a proxy sees the stream
                        // alive (nginx closes one silent for 60 s by default).
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    }
                }
                try await writer.finish(nil)
            })
        }
        group.ws("live/ws", shouldUpgrade: { request, _ in
            _ = try RequestInput.query(request, allowed: [])
            // A plain GET reaches this route too: it gets a reason, not an empty 200.
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                throw APIError.badRequest("this is a WebSocket: connect with Upgrade: websocket (or read /api/v1/live/events, "
                                          + "the same messages as Server-Sent Events)")
            }
            return .upgrade([:])
        }) { inbound, outbound, context in
            let channel = context.requestContext.channel
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    try? await self.clients.serve(.ws, channel: channel) { output in
                        if case .message(let message) = output { try await outbound.write(.text(message.json())) }
                    }
                    // The hub is stopping (or the client was cut off): say goodbye.
                    try? await outbound.close(.goingAway, reason: "stream ended")
                }
                // Whatever the client sends is ignored; its closing ends the stream.
                do { for try await _ in inbound {} } catch {}
                group.cancelAll()
            }
        }
    }
}
