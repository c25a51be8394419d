import Foundation
import Hummingbird

/// The dashboard (`/`, `/dashboard/app.js`, `/dashboard/style.css`) and the OpenAPI document
/// (`/api/v1/openapi.json`): package resources read once at start, served from memory.
package struct StaticRoutes: Sendable {
    struct File: Sendable {
        var bytes: ByteBuffer
        var contentType: String
    }

    let files: [String: File]
    let openAPI: ByteBuffer

    /// Reads the resources; a missing one is a packaging error reported at start.
    package init() throws {
        func load(_ name: String, _ ext: String, subdirectory: String?) throws -> ByteBuffer {
            guard let url = Bundle.module.url(forResource: name, withExtension: ext, subdirectory: subdirectory) else {
                throw APIError.internalError("resource \(subdirectory.map { $0 + "/" } ?? "")\(name).\(ext) is missing")
            }
            return ByteBuffer(bytes: try Data(contentsOf: url))
        }
        files = [
            "index.html": File(bytes: try load("index", "html", subdirectory: "Dashboard"), contentType: "text/html; charset=utf-8"),
            "app.js": File(bytes: try load("app", "js", subdirectory: "Dashboard"), contentType: "text/javascript; charset=utf-8"),
            "style.css": File(bytes: try load("style", "css", subdirectory: "Dashboard"), contentType: "text/css; charset=utf-8"),
        ]
        openAPI = try load("openapi", "json", subdirectory: nil)
    }

    func register(on router: Router<APIRequestContext>) {
        router.get("/") { _, _ in try self.file("index.html") }
        router.get("dashboard/:file") { _, context in try self.file(context.parameters.get("file") ?? "") }
        router.get("api/v1/openapi.json") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "application/json; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: self.openAPI))
        }
    }

    func file(_ name: String) throws -> Response {
        guard let file = files[name] else { throw APIError.notFound("no dashboard file '\(name)'") }
        var headers = HTTPFields()
        headers[.contentType] = file.contentType
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
    }
}
