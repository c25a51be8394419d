import Hummingbird

/// With a token configured, every request but `/healthz` must carry
/// `Authorization: Bearer <token>`; the comparison takes the same time whatever the bytes,
/// so the token cannot be guessed byte by byte from response times.
///
/// The dashboard's static files (`/`, `/dashboard/…`) are open too: they hold no data, and a
/// browser cannot add a header when it opens a page; the page asks for the token and sends
/// it with every data request.
package struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]

    package init(token: String) { self.token = Array(token.utf8) }

    package func handle(_ request: Request, context: Context,
                        next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if path == "/healthz" || path == "/" || path.hasPrefix("/dashboard/") { return try await next(request, context) }
        guard let header = request.headers[.authorization] else {
            throw APIError(.unauthorized, "unauthorized", "this hub needs 'Authorization: Bearer <token>' (api.token)")
        }
        let prefix = "Bearer "
        guard header.count > prefix.count, header.lowercased().hasPrefix("bearer "),
              Self.constantTimeEqual(Array(header.utf8.dropFirst(prefix.utf8.count)), token) else {
            throw APIError(.unauthorized, "unauthorized", "wrong bearer token")
        }
        return try await next(request, context)
    }

    /// Equal length and bytes, looking at every byte of the longer input whatever differs.
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = a.count ^ b.count
        let n = max(a.count, b.count)
        for i in 0..<n {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            difference |= Int(x ^ y)
        }
        return difference == 0
    }
}
