import AsyncHTTPClient
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import Synchronization
import TestSupport

/// Debian's headless chromium driven over the DevTools protocol (its WebSocket), with one page
/// kept open while the hub under it changes: a night ends, the pod goes, the hub stops. A page
/// loaded once (`--dump-dom`) never sees those. `evaluate` runs JavaScript in the page and
/// returns its value; `failRequests` has the browser's network layer answer matching API
/// requests with an error (the DevTools `Fetch` domain), so a page can be seen meeting a hub
/// that errs, with the real hub behind it.
final class BrowserPage: Sendable {
    private let process: Process
    private let profile: TempDir
    private let outbound: AsyncStream<String>.Continuation
    private let state = State()
    private let session: Task<Void, Never>

    /// What the DevTools session and the test share.
    private final class State: Sendable {
        /// Answers by command id, as the JSON text chromium sent.
        let replies = Mutex<[Int: String]>([:])
        let nextID = Mutex(0)
        let failing = Mutex<[String: Int]>([:])
        let delayed = Mutex<[String: Double]>([:])
    }

    /// Starts chromium with a page of `width`×`height` CSS pixels (a phone when narrow), the
    /// browser's clock in `timeZone` and its language `locale`.
    init(width: Int, height: Int, timeZone: String, locale: String) async throws {
        let profile = try TempDir()
        self.profile = profile
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                             "--remote-debugging-port=0", "--remote-allow-origins=*",
                             "--user-data-dir=\(profile.path("profile"))", "about:blank"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // chromium writes the port it chose to DevToolsActivePort in its profile.
        var port: Int?
        _ = await eventually(60) {
            port = (try? String(contentsOfFile: profile.path("profile/DevToolsActivePort"), encoding: .utf8))
                .flatMap { $0.split(separator: "\n").first }.flatMap { Int($0) }
            return port != nil
        }
        guard let port else { process.terminate(); throw TestFailure("chromium never opened its DevTools port") }
        var pageURL: String?
        _ = await eventually(60) {
            let response = try? await HTTPClient.shared.get(url: "http://127.0.0.1:\(port)/json/list").get()
            let targets = response?.body.flatMap { try? JSONSerialization.jsonObject(with: Data(buffer: $0)) } as? [[String: Any]]
            pageURL = targets?.first { $0["type"] as? String == "page" }?["webSocketDebuggerUrl"] as? String
            return pageURL != nil
        }
        guard let pageURL else { process.terminate(); throw TestFailure("chromium opened no page") }
        let (commands, outbound) = AsyncStream<String>.makeStream()
        self.outbound = outbound
        let state = self.state
        session = Task {
            // A screenshot comes back as one frame of megabytes; the default 16 KiB limit closes the session.
            _ = try? await WebSocketClient.connect(url: pageURL, configuration: .init(maxFrameSize: 64 << 20),
                                                   logger: Logger(label: "devtools")) { inbound, writer, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for await command in commands { try await writer.write(.text(command)) } }
                    group.addTask {
                        for try await message in inbound.messages(maxSize: 64 << 20) {
                            guard case .text(let text) = message,
                                  let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { continue }
                            if let id = object["id"] as? Int {
                                state.replies.withLock { $0[id] = text }
                            } else if object["method"] as? String == "Fetch.requestPaused",
                                      let params = object["params"] as? [String: Any], let id = params["requestId"] as? String,
                                      let url = (params["request"] as? [String: Any])?["url"] as? String {
                                // Answered here, at once: the page's fetch waits on it.
                                let status = state.failing.withLock { $0.first { url.contains($0.key) }?.value }
                                let delay = state.delayed.withLock { $0.first { url.contains($0.key) }?.value }
                                let reply: [String: Any] = if let status {
                                    ["id": -1, "method": "Fetch.fulfillRequest", "params": [
                                        "requestId": id, "responseCode": status,
                                        "responseHeaders": [["name": "Content-Type", "value": "application/json"]],
                                        "body": Data(#"{"error":"internal","detail":"the store did not answer"}"#.utf8).base64EncodedString()]]
                                } else {
                                    ["id": -1, "method": "Fetch.continueRequest", "params": ["requestId": id]]
                                }
                                let text = String(decoding: try JSONSerialization.data(withJSONObject: reply), as: UTF8.self)
                                if let delay {
                                    // Let through later, without holding up the session's other answers.
                                    Task { try? await Task.sleep(for: .seconds(delay)); outbound.yield(text) }
                                } else {
                                    try await writer.write(.text(text))
                                }
                            }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
        // A page never brought to the front is never painted: a screenshot of it waits for ever.
        _ = try await call("Page.bringToFront")
        let mobile = width < 600
        _ = try await call("Emulation.setDeviceMetricsOverride",
                           ["width": width, "height": height, "deviceScaleFactor": mobile ? 2 : 1, "mobile": mobile])
        _ = try await call("Emulation.setTimezoneOverride", ["timezoneId": timeZone])
        _ = try await call("Emulation.setLocaleOverride", ["locale": locale])
    }

    /// Sends one DevTools command and waits for its answer (`result`), or throws its error.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:], timeout: Double = 60) async throws -> [String: Any] {
        let id = state.nextID.withLock { $0 += 1; return $0 }
        let data = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params])
        outbound.yield(String(decoding: data, as: UTF8.self))
        var text: String?
        _ = await eventually(timeout) {
            text = state.replies.withLock { $0.removeValue(forKey: id) }
            return text != nil
        }
        guard let text, let reply = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw TestFailure("chromium did not answer \(method) within \(timeout) s")
        }
        if let error = reply["error"] { throw TestFailure("\(method): \(error)") }
        return reply["result"] as? [String: Any] ?? [:]
    }

    /// Opens `url` and waits until the page says its first loads have settled (`data-loaded`).
    func open(_ url: String) async throws {
        try await call("Page.navigate", ["url": url])
        let loaded = await eventually(60) { (try? await self.evaluate("document.body && document.body.dataset.loaded") as? String) == "true" }
        guard loaded else { throw TestFailure("the page at \(url) never finished loading") }
    }

    /// The value of a JavaScript expression in the page (a promise is awaited).
    func evaluate(_ expression: String) async throws -> Any? {
        let result = try await call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = result["exceptionDetails"] { throw TestFailure("\(expression): \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Requests whose URL contains one of `patterns` are answered `status` by the browser
    /// itself from now on, the rest go to the hub.
    func failRequests(containing patterns: [String], status: Int) async throws {
        state.failing.withLock { $0 = Dictionary(patterns.map { ($0, status) }, uniquingKeysWith: { a, _ in a }) }
        try await call("Fetch.enable", ["patterns": [["urlPattern": "*/api/v1/*"]]])
    }

    /// Requests whose URL contains one of `patterns` reach the hub only `seconds` later from now
    /// on (an answer that comes after another one, every time).
    func delayRequests(containing patterns: [String], seconds: Double) async throws {
        state.delayed.withLock { $0 = Dictionary(patterns.map { ($0, seconds) }, uniquingKeysWith: { a, _ in a }) }
        try await call("Fetch.enable", ["patterns": [["urlPattern": "*/api/v1/*"]]])
    }

    /// Requests go to the hub as they are again.
    func stopInterceptingRequests() async throws {
        state.delayed.withLock { $0 = [:] }
        state.failing.withLock { $0 = [:] }
        try await call("Fetch.disable")
    }

    /// The page's viewport from now on: `width`×`height` CSS pixels (a phone when narrow), as a
    /// phone turned or zoomed in gives.
    func resize(width: Int, height: Int) async throws {
        let mobile = width < 600
        try await call("Emulation.setDeviceMetricsOverride",
                       ["width": width, "height": height, "deviceScaleFactor": mobile ? 2 : 1, "mobile": mobile])
    }

    /// A PNG of the page as shown, for a person to look at.
    func screenshot(to url: URL) async throws {
        let height = try await evaluate("document.documentElement.scrollHeight") as? Int ?? 844
        let width = try await evaluate("document.documentElement.clientWidth") as? Int ?? 390
        let result = try await call("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": true,
                                                                "clip": ["x": 0, "y": 0, "width": width, "height": height, "scale": 1]])
        guard let data = (result["data"] as? String).flatMap({ Data(base64Encoded: $0) }) else { throw TestFailure("no screenshot") }
        try data.write(to: url)
    }

    func close() async {
        outbound.finish()
        session.cancel()
        process.terminate()
        process.waitUntilExit()
        await session.value
        profile.cleanup()
    }
}
