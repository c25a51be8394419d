import TestSupport
import AsyncHTTPClient
import Foundation
import Hub
import HubAPI
import NIOHTTP1
import Testing

/// `api.allowedOrigins`: a page on another origin (a Home Assistant card) uses a hub with a
/// token from the browser, as a browser asks it, over real HTTP on loopback: the preflight
/// (no token) answered, every answer to the page's own requests readable (errors included),
/// other origins and requests without one unchanged, and no CORS at all when the list is empty.
@Suite(.serialized) struct APICORSTests {
    static let token = "cors-s3cret"
    static let page = "https://ha.example.org:8123"

    /// The headers a browser sends with a page's request (`Origin`) or its preflight.
    static func preflight(_ origin: String, method: String = "PUT") -> [(String, String)] {
        [("Origin", origin), ("Access-Control-Request-Method", method),
         ("Access-Control-Request-Headers", "authorization,content-type")]
    }

    @Test func aListedPageGetsThePreflightAndReadsEveryAnswer() async throws {
        let hub = try await APITestHub.start(serial: "API-CORS", speed: 10, token: Self.token) {
            // The second as a person may write it: a browser sends `http://dash.example`.
            $0.api.allowedOrigins = [Self.page, "HTTP://Dash.Example:80"]
        }
        #expect(await eventually { hub.daemon.bus.state.pods["API-CORS"]?.connected == true })

        // The preflight: no token, answered before the token check.
        let preflight = try await hub.request(.OPTIONS, "/api/v1/schedule/manual", headers: Self.preflight(Self.page))
        #expect(preflight.status == 204, "\(preflight.status) \(preflight.body)")
        #expect(preflight.headers.first(name: "access-control-allow-origin") == Self.page)
        #expect(preflight.headers["vary"].contains("Origin"), "\(preflight.headers)")
        #expect(preflight.headers.first(name: "access-control-allow-methods") == "DELETE, GET, HEAD, POST, PUT")
        #expect(preflight.headers.first(name: "access-control-allow-headers") == "Authorization, Content-Type")
        #expect(preflight.headers.first(name: "access-control-max-age") == "600")
        #expect(preflight.headers.first(name: "access-control-allow-credentials") == nil)
        #expect(preflight.body.isEmpty)
        #expect(preflight.headers.first(name: "access-control-allow-private-network") == nil, "not asked, not said")
        // Chrome's Private Network Access: a page on a public address asks before reaching a hub at home.
        let fromPublic = try await hub.request(.OPTIONS, "/api/v1/pods",
                                               headers: Self.preflight(Self.page, method: "GET") + [("Access-Control-Request-Private-Network", "true")])
        #expect(fromPublic.status == 204 && fromPublic.headers.first(name: "access-control-allow-private-network") == "true",
                "\(fromPublic.status) \(fromPublic.headers)")
        let written = try await hub.request(.OPTIONS, "/api/v1/pods", headers: Self.preflight("http://dash.example", method: "GET"))
        #expect(written.status == 204 && written.headers.first(name: "access-control-allow-origin") == "http://dash.example",
                "\(written.status) \(written.headers)")

        // Another site's preflight: refused, with the usual JSON error and nothing to read it by.
        let refused = try await hub.request(.OPTIONS, "/api/v1/schedule/manual", headers: Self.preflight("https://evil.example"))
        #expect(refused.status == 403 && refused.json?["error"] as? String == "forbidden", "\(refused.status) \(refused.body)")
        #expect((refused.json?["detail"] as? String)?.contains("api.allowedOrigins") == true, "\(refused.body)")
        #expect(refused.headers.first(name: "access-control-allow-origin") == nil)

        // The page's own requests: answers and errors alike carry the header.
        let origin = [("Origin", Self.page)]
        func expectReadable(_ answer: APITestHub.Answer, _ status: Int, _ what: String) {
            #expect(answer.status == status, "\(what): \(answer.status) \(answer.body)")
            #expect(answer.headers.first(name: "access-control-allow-origin") == Self.page, "\(what): \(answer.headers)")
            #expect(answer.headers["vary"].contains("Origin"), "\(what): \(answer.headers)")
            #expect(answer.headers.first(name: "access-control-allow-credentials") == nil, "\(what)")
            // Its Allow (405) and WWW-Authenticate (401) are readable too.
            #expect(answer.headers.first(name: "access-control-expose-headers") == "Allow, WWW-Authenticate", "\(what)")
        }
        let pods = try await hub.request(.GET, "/api/v1/pods", token: Self.token, headers: origin)
        expectReadable(pods, 200, "GET /pods")
        #expect((pods.json?["pods"] as? [[String: Any]])?.first?["serial"] as? String == "API-CORS", "\(pods.body)")
        let noToken = try await hub.request(.GET, "/api/v1/pods", headers: origin)
        expectReadable(noToken, 401, "no token")
        #expect(noToken.json?["error"] as? String == "unauthorized")
        expectReadable(try await hub.request(.GET, "/api/v1/pods", token: "wrong", headers: origin), 401, "a wrong token")
        let missing = try await hub.request(.GET, "/api/v1/nowhere", token: Self.token, headers: origin)
        expectReadable(missing, 404, "an unknown path")
        #expect(missing.json?["error"] as? String == "not_found")
        let wrongMethod = try await hub.request(.GET, "/api/v1/pods/API-CORS/power", token: Self.token, headers: origin)
        expectReadable(wrongMethod, 405, "a method the path lacks")
        #expect(wrongMethod.headers.first(name: "allow") == "POST")
        let badBody = try await hub.request(.PUT, "/api/v1/schedule/manual", body: #"{"side": "middle"}"#, token: Self.token,
                                            headers: origin)
        expectReadable(badBody, 400, "a bad body")
        expectReadable(try await hub.request(.HEAD, "/api/v1/pods", token: Self.token, headers: origin), 200, "HEAD")
        expectReadable(try await hub.request(.GET, "/healthz", headers: origin), 200, "/healthz")
        // Not a preflight (no Access-Control-Request-Method): the token and 405 as before, readable.
        let plainOptions = try await hub.request(.OPTIONS, "/api/v1/pods", token: Self.token, headers: origin)
        expectReadable(plainOptions, 405, "OPTIONS that is not a preflight")

        // The live stream, read with fetch and the header as the dashboard does.
        var stream = HTTPClientRequest(url: hub.base + "/api/v1/live/events")
        stream.headers.add(name: "Authorization", value: "Bearer \(Self.token)")
        stream.headers.add(name: "Origin", value: Self.page)
        let events = try await hub.http.execute(stream, timeout: .seconds(60))
        #expect(events.status == .ok && events.headers.first(name: "content-type") == "text/event-stream")
        #expect(events.headers.first(name: "access-control-allow-origin") == Self.page, "\(events.headers)")
        #expect(events.headers["vary"].contains("Origin"))
        var received = ""
        for try await buffer in events.body {
            received += String(buffer: buffer)
            if received.contains("event: hello") { break }
        }
        #expect(received.contains("event: hello"), "\(received)")

        // Another origin, or none: answered as without CORS.
        for headers in [[("Origin", "https://evil.example")], [("Origin", "https://ha.example.org")], []] {
            let other = try await hub.request(.GET, "/api/v1/pods", token: Self.token, headers: headers)
            #expect(other.status == 200, "\(headers): \(other.status)")
            #expect(other.headers.first(name: "access-control-allow-origin") == nil && other.headers["vary"].isEmpty,
                    "\(headers): \(other.headers)")
            let denied = try await hub.request(.GET, "/api/v1/pods", headers: headers)
            #expect(denied.status == 401 && denied.headers.first(name: "access-control-allow-origin") == nil, "\(headers)")
        }
        // Without an Origin an OPTIONS is no preflight, whatever else it carries.
        let tool = try await hub.request(.OPTIONS, "/api/v1/pods", token: Self.token,
                                         headers: [("Access-Control-Request-Method", "GET")])
        #expect(tool.status == 405 && tool.headers.first(name: "access-control-allow-origin") == nil, "\(tool.status)")

        // Preflights and 405s are counted under their path's pattern; only an unknown path is NotFound.
        let metrics = try await hub.metrics(token: Self.token)
        func requests(_ route: String, _ status: Int) -> Double? {
            metrics.value("podbridge_api_requests_total", ["route": route, "status": String(status)])
        }
        #expect(requests("/api/v1/schedule/manual", 204) == 1, "\(metrics.text)")
        #expect(requests("/api/v1/schedule/manual", 403) == 1)
        #expect(requests("/api/v1/pods", 204) == 2, "two preflights")
        #expect(requests("/api/v1/pods", 405) == 2, "the plain OPTIONS and the tool's")
        #expect(requests("/api/v1/pods/{serial}/power", 405) == 1, "\(metrics.text)")
        #expect(requests("NotFound", 404) == 1)
        await hub.stop()
    }

    @Test func withoutAllowedOriginsOptionsIsStill405AndNothingIsShared() async throws {
        let hub = try await APITestHub.start(serial: "API-NOCORS", speed: 10, token: Self.token)
        let preflight = try await hub.request(.OPTIONS, "/api/v1/pods", headers: Self.preflight(Self.page, method: "GET"))
        #expect(preflight.status == 401, "the token first, as before: \(preflight.status)")
        let options = try await hub.request(.OPTIONS, "/api/v1/pods", token: Self.token, headers: Self.preflight(Self.page, method: "GET"))
        #expect(options.status == 405 && options.headers.first(name: "allow") == "GET, HEAD", "\(options.status) \(options.headers)")
        #expect(options.json?["error"] as? String == "method_not_allowed")
        let get = try await hub.request(.GET, "/api/v1/pods", token: Self.token, headers: [("Origin", Self.page)])
        #expect(get.status == 200)
        for answer in [preflight, options, get] {
            #expect(!answer.headers.contains { $0.name.lowercased().hasPrefix("access-control-") }, "\(answer.headers)")
        }
        await hub.stop()
    }

    @Test func allowedOriginsWithoutATokenNeverStartTheAPI() async throws {
        // The configuration refuses it; the service does too, should that check be skipped.
        try await APITestHub.expectNeverStarts(naming: "api.allowedOrigins") {
            $0.api.listen = "127.0.0.1:0"
            $0.api.allowedOrigins = [Self.page]
        }
    }
}
