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
        let directory = try Self.resourceDirectory()
        func load(_ path: String) throws -> ByteBuffer {
            let url = directory.appendingPathComponent(path)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw WebFilesMissing(description: "the hub's web files are incomplete: \(url.path) is missing or unreadable")
            }
            return ByteBuffer(bytes: data)
        }
        files = [
            "index.html": File(bytes: try load("Dashboard/index.html"), contentType: "text/html; charset=utf-8"),
            "app.js": File(bytes: try load("Dashboard/app.js"), contentType: "text/javascript; charset=utf-8"),
            "style.css": File(bytes: try load("Dashboard/style.css"), contentType: "text/css; charset=utf-8"),
        ]
        openAPI = try load("openapi.json")
    }

    /// The directory SwiftPM copies this module's resources to, named for the package and module.
    package static let bundleName = "podbridge_HubAPI.resources"

    /// The resources beside the executable that is running: `swift build`'s products directory,
    /// or `make install`'s PREFIX/lib/podbridge, which PREFIX/bin/podbridge links to (the link is
    /// resolved through /proc/self/exe). Not `Bundle.module`: its accessor ends the process when
    /// the bundle is not beside the executable, falling back to the absolute path of the build
    /// directory, which an installed daemon must not depend on (systemd's ProtectHome hides a
    /// checkout in /home; a CI clone is unreadable to the unit's user).
    package static func resourceDirectory() throws -> URL {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let directory = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(bundleName)
        guard FileManager.default.fileExists(atPath: directory.path) else {
            throw WebFilesMissing(description:
                "the dashboard and OpenAPI files are not installed: no \(bundleName) beside \(executable)"
                    + " (`make install` puts it in PREFIX/lib/podbridge with the binary; set api.enabled false to run without the API)")
        }
        return directory
    }

    /// A packaging error, said as the command's error (not an HTTP one: nothing was asked yet).
    package struct WebFilesMissing: Error, CustomStringConvertible {
        package var description: String
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
