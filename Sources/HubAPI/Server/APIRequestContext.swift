import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The request context of every route: Hummingbird's core storage, the WebSocket upgrade
/// reference (for /api/v1/live/ws) and a small upload limit — the API takes only short
/// JSON bodies, so anything bigger is refused with 413 before it is read.
package struct APIRequestContext: RequestContext, WebSocketRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let webSocket: WebSocketHandlerReference<APIRequestContext>
    /// The connection, so a live client that falls too far behind can be cut off even while
    /// a write to it is stuck.
    package let channel: any Channel

    package init(source: Source) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }

    /// Largest request body accepted (bytes).
    package static let maxBody = 16 * 1024
    package var maxUploadSize: Int { Self.maxBody }
}
