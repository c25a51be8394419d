import Foundation
import Hummingbird
import NIOCore

/// A request whose path is one of the API's but whose method is not (`TRACE /healthz`,
/// `DELETE /api/v1/pods`) is answered 405 with an `Allow` header, not 404. The paths and
/// their methods are the OpenAPI document's (the document is the truth), plus the
/// dashboard's files, which the document does not describe.
package struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    struct Route: Sendable {
        /// The path as the API writes it (`/api/v1/nights/{wakeDate}/{side}`).
        var template: String
        /// The path's segments; nil for a parameter (`{wakeDate}`), which matches any one segment.
        var segments: [String?]
        var methods: [String]
    }

    let routes: [Route]

    /// - Parameters:
    ///   - openAPI: the OpenAPI document (its `paths`).
    ///   - extra: further paths (templates with `{parameter}` segments) and their methods.
    package init(openAPI: ByteBuffer, extra: [String: [String]] = [:]) throws {
        guard let document = try JSONSerialization.jsonObject(with: Data(openAPI.readableBytesView)) as? [String: Any],
              let paths = document["paths"] as? [String: Any] else {
            throw APIError.internalError("the OpenAPI document has no paths")
        }
        let verbs = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        var table: [String: [String]] = extra
        for (path, item) in paths {
            guard let item = item as? [String: Any] else { continue }
            table[path, default: []] += verbs.filter { item[$0] != nil }.map { $0.uppercased() }
        }
        // HEAD is answered wherever GET is (`HeadMiddleware`).
        for (path, methods) in table where methods.contains("GET") { table[path]?.append("HEAD") }
        routes = table.map { path, methods in
            Route(template: path, segments: Self.segments(path).map { $0.hasPrefix("{") && $0.hasSuffix("}") ? nil : $0 },
                  methods: Array(Set(methods)).sorted())
        }
    }

    /// Every method some path has (a CORS preflight's answer).
    package var methods: [String] { Array(Set(routes.flatMap(\.methods))).sorted() }

    static func segments(_ path: String) -> [String] {
        path.split(separator: "/" as Character, omittingEmptySubsequences: true).map { String($0) }
    }

    /// The routes whose template matches `path`.
    private func matching(_ path: String) -> [Route] {
        let parts = Self.segments(path)
        return routes.filter { route in
            route.segments.count == parts.count
                && zip(route.segments, parts).allSatisfy { template, part in template == nil || template == part }
        }
    }

    /// The methods allowed on `path`, nil if the API has no such path.
    func allowedMethods(path: String) -> [String]? {
        let matching = matching(path)
        guard !matching.isEmpty else { return nil }
        return Array(Set(matching.flatMap(\.methods))).sorted()
    }

    /// The template of the API's path `path` is (the most literal one, when a fixed segment and
    /// a parameter both match), nil if none: what a request the router did not route (a
    /// preflight, a method the path has not) is counted under on `/metrics`.
    package func template(path: String) -> String? {
        matching(path).min { a, b in
            let (pa, pb) = (a.segments.filter { $0 == nil }.count, b.segments.filter { $0 == nil }.count)
            return pa != pb ? pa < pb : a.template < b.template
        }?.template
    }

    package func handle(_ request: Request, context: Context,
                        next: (Request, Context) async throws -> Response) async throws -> Response {
        // A route matched path and method: its handler runs (with the route's pattern set).
        guard context.endpointPath == nil, let allowed = allowedMethods(path: request.uri.path),
              !allowed.contains(request.method.rawValue) else {
            return try await next(request, context)
        }
        var headers = HTTPFields()
        headers[.allow] = allowed.joined(separator: ", ")
        throw APIError(.methodNotAllowed, "method_not_allowed",
                       "\(request.method.rawValue) is not allowed on \(request.uri.path); allowed: \(allowed.joined(separator: ", "))",
                       headers: headers)
    }
}
