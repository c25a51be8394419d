import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// `GET /api/v1/live/events` (Server-Sent Events) and `GET /api/v1/live/ws` (WebSocket):
/// the same messages (`LiveMessage`) on both, from `LiveClients`.
package struct LiveStreamRoutes: Sendable {
    let clients: LiveClients

    /// The WebSocket route's pattern as the router names it: its `200` means the upgrade went
    /// ahead (a plain GET is refused), and `/metrics` counts it as the `101` the client got.
    static let webSocketRoute = "/api/v1/live/ws"

    func register(on group: RouterGroup<APIRequestContext>) {
        group.get("live/events") { request, context in
            _ = try RequestInput.query(request, allowed: [])
            // EventSource sends the last id it saw when it reconnects; anything else that is
            // not a number of ours is treated as unknown (`missed`), not refused.
            let after = request.headers.first { $0.name.canonicalName == "last-event-id" }
                .map { $0.value.trimmingCharacters(in: .whitespaces) }
                .flatMap { $0.isEmpty ? nil : UInt64($0) ?? 0 }
            let clients = self.clients
            let channel = context.channel
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-cache"
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                try await clients.serve(.sse, channel: channel, keepsAlive: true, after: after) { output in
                    switch output {
                    case .message(let message, let id):
                        // Housekeeping messages carry no id: EventSource keeps the last event's.
                        let idLine = id.map { "id: \($0)\n" } ?? ""
                        try await writer.write(ByteBuffer(string: "\(idLine)event: \(message.type)\ndata: \(message.json())\n\n"))
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
            _ = try Self.resumeAfter(request)
            // A plain GET reaches this route too: it gets a reason, not an empty 200.
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                throw APIError.badRequest("this is a WebSocket: connect with Upgrade: websocket (or read /api/v1/live/events, "
                                          + "the same messages as Server-Sent Events)")
            }
            return .upgrade([:])
        }) { inbound, outbound, context in
            // Checked before the upgrade, so it reads here.
            let after = try? Self.resumeAfter(context.request)
            let channel = context.requestContext.channel
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    try? await self.clients.serve(.ws, channel: channel, after: after) { output in
                        // The event's number rides in the message (SSE puts it on its `id:` line).
                        guard case .message(var message, let id) = output else { return }
                        message.id = id
                        try await outbound.write(.text(message.json()))
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

    /// The WebSocket's `?after=`: the number of the last event a client saw (a message's `id`),
    /// as SSE's `Last-Event-ID`; nil without one. Anything but a number is refused.
    static func resumeAfter(_ request: Request) throws -> UInt64? {
        guard let text = try RequestInput.query(request, allowed: ["after"])["after"] else { return nil }
        guard let after = UInt64(text) else {
            throw APIError.badRequest("after must be the id of an event this client saw (a whole number), not '\(text)'")
        }
        return after
    }
}
