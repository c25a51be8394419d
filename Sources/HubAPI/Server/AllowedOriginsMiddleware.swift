import Hummingbird

/// Lets the web pages of `api.allowedOrigins` (a Home Assistant card, a page of one's own) use
/// the API from their own origin; a hub only has any with a token (`HubConfiguration.validate`).
///
/// It runs before the token check, since a browser sends its preflight without the page's
/// `Authorization`, and outside `JSONErrorMiddleware`, so every error (401, 404, 405…) is an
/// `APIError` by the time it gets here and carries the header too: without it the page cannot
/// read the error and sees only a failed fetch.
/// No `Access-Control-Allow-Credentials`: the token is a header the page sets, not a cookie.
/// Answers to requests without an `Origin`, or from another one, are left as they are.
package struct AllowedOriginsMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Each as a browser sends it (`WebOrigin.description`).
    let origins: Set<String>
    let methods: String

    /// - Parameter methods: every method the API answers somewhere (for the preflight).
    package init(origins: Set<String>, methods: [String]) {
        self.origins = origins
        self.methods = methods.joined(separator: ", ")
    }

    package func handle(_ request: Request, context: Context,
                        next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            guard origins.contains(origin) else {
                throw APIError(.forbidden, "forbidden", "the web page at \(origin) may not use this hub's API: "
                               + "it is not one of api.allowedOrigins (docs/api.md)")
            }
            var headers = HTTPFields()
            Self.allow(origin, in: &headers)
            headers[.accessControlAllowMethods] = methods
            headers[.accessControlAllowHeaders] = "Authorization, Content-Type"
            // Ten minutes: a page asks again soon after the list changes, and not before each request.
            headers[.accessControlMaxAge] = "600"
            // Private Network Access: Chrome asks before a page on a public address (a cloud
            // dashboard) reaches a hub on the home network, and sends the request only on this yes.
            if request.headers[Self.requestPrivateNetwork]?.lowercased() == "true" {
                headers[Self.allowPrivateNetwork] = "true"
            }
            return Response(status: .noContent, headers: headers)
        }
        guard origins.contains(origin) else { return try await next(request, context) }
        do {
            var response = try await next(request, context)
            Self.allow(origin, in: &response.headers)
            return response
        } catch var error as APIError {
            Self.allow(origin, in: &error.headers)
            throw error
        }
    }

    static var requestPrivateNetwork: HTTPFields.Element.Name { .init("Access-Control-Request-Private-Network")! }
    static var allowPrivateNetwork: HTTPFields.Element.Name { .init("Access-Control-Allow-Private-Network")! }
    /// The headers of ours a page could not read otherwise (not CORS-safelisted): a 405's
    /// `Allow`, a 401's `WWW-Authenticate`.
    static var exposed: String { "Allow, WWW-Authenticate" }

    /// The answer is the page's to read; `Vary` keeps a cache from serving it to another origin.
    static func allow(_ origin: String, in headers: inout HTTPFields) {
        headers[.accessControlAllowOrigin] = origin
        headers[.accessControlExposeHeaders] = exposed
        headers[.vary] = headers[.vary].map { "\($0), Origin" } ?? "Origin"
    }
}
