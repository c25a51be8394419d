import Hummingbird
import Hub

/// Without a token the API is for programs on this machine alone, and loopback alone does not
/// ensure that: a web page the user opens elsewhere can make the browser send requests to
/// 127.0.0.1 (a form or `fetch` posting a command: cross-site request forgery), or point a name
/// of its own at 127.0.0.1 and read the answers as its own origin (DNS rebinding); and a
/// reverse proxy passes the whole LAN in. So, with no token, a request is refused (403) when
/// - its `Host` is not a loopback address or `localhost` (rebinding: the page's own name);
/// - it came through a proxy (`Forwarded`, `X-Forwarded-For` or `X-Real-IP`): serving beyond
///   this machine needs `api.token`;
/// - it would change something (any method but GET and HEAD) and its `Origin` is another site's.
/// With a token none of these can happen unasked: a browser never adds the bearer header to
/// another site's request, and the token is what a proxy's users need.
package struct LoopbackOnlyMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The address the hub listens on (a loopback one: without a token the hub listens on no other).
    let listenHost: String

    package init(listenHost: String) { self.listenHost = listenHost }

    package func handle(_ request: Request, context: Context,
                        next: (Request, Context) async throws -> Response) async throws -> Response {
        // HTTP/1's Host header is the request's authority.
        let host = request.head.authority
        if let host, !Self.isLoopback(Self.hostName(host), listenHost: listenHost) {
            throw Self.refused("this hub has no api.token, so it answers requests to this machine's own address only "
                + "(127.0.0.1, [::1] or localhost), not to '\(host)': set api.token to serve it by another name (docs/api.md)")
        }
        let forwarded: Set = ["forwarded", "x-forwarded-for", "x-real-ip"]
        if request.headers.contains(where: { forwarded.contains($0.name.canonicalName) }) {
            throw Self.refused("this request came through a proxy, and this hub has no api.token: set one before serving "
                + "the hub beyond this machine (docs/api.md, \"Behind a reverse proxy\")")
        }
        if request.method != .get, request.method != .head, let origin = request.headers[.origin],
           !Self.sameSite(origin: origin, host: host, listenHost: listenHost) {
            throw Self.refused("a request from the web page at \(origin) may not change this hub (cross-site request)")
        }
        return try await next(request, context)
    }

    static func refused(_ detail: String) -> APIError { APIError(.forbidden, "forbidden", detail) }

    /// The host of a `Host` header or an origin's authority: without the port, IPv6 unbracketed.
    static func hostName(_ authority: String) -> String {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if authority.filter({ $0 == ":" }).count > 1 { return authority }  // a bare IPv6 address
        return String(authority.split(separator: ":", maxSplits: 1).first ?? "")
    }

    /// A loopback host, or the one the hub listens on (itself loopback: see `ListenAddress`).
    static func isLoopback(_ host: String, listenHost: String) -> Bool {
        ListenAddress.isLoopback(host: host) || host.lowercased() == hostName(listenHost).lowercased()
    }

    /// An origin on this machine: a loopback host, and the request's own authority when it has one
    /// (the dashboard's own requests carry its origin).
    static func sameSite(origin: String, host: String?, listenHost: String) -> Bool {
        guard let scheme = origin.range(of: "://") else { return false }  // "null": a sandboxed or file page
        let authority = String(origin[scheme.upperBound...])
        if let host { return authority.lowercased() == host.lowercased() }
        return isLoopback(hostName(authority), listenHost: listenHost)
    }
}
