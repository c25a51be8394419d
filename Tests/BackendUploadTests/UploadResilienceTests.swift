import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import Testing
import TestSupport
@testable import BackendUpload
import SleepStore

/// What the worker does when things go wrong around it: the database, the token, the
/// network, a session given up, a strange poll interval.
@Suite struct UploadResilienceTests {
    static let t0: Int64 = 1_705_400_000 + 10 * 86_400
    static let utc = TimeZone(identifier: "UTC")!

    func config(_ baseURL: String, maxAttempts: Int = 6, requestTimeoutSeconds: Int64 = 30) throws -> UploadConfiguration {
        try UploadConfiguration(baseURL: baseURL, bearerToken: "s3cret", backoff: BackoffPolicy(baseSeconds: 10, capSeconds: 600),
                                maxAttempts: maxAttempts, requestTimeoutSeconds: requestTimeoutSeconds,
                                leaseSeconds: max(60, 2 * requestTimeoutSeconds))
    }

    func fill(_ store: NightStore, count: Int) async throws -> [String] {
        var ids: [String] = []
        for n in 0..<count { ids.append(try await store.save(testNight(start: 1_705_400_000 + Int64(n) * 86_400)).sourceID) }
        return ids
    }

    /// The daemon stopped (exit 0) when another process held the write lock past the 10 s
    /// busy timeout: the worker threw and its service returned, which ends the service group.
    @Test(.enabled(if: SQLiteWriteLock.available, "needs the sqlite3 shell"), .timeLimit(.minutes(2)))
    func aLockedDatabaseIsAWarningAndTheWorkerCarriesOn() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let path = dir.path("l.sqlite")
        let store = try NightStore(path: path, timeZone: Self.utc, clock: ManualClock(Self.t0))
        let id = try await fill(store, count: 1)[0]
        let worker = OutboxWorker(store: store, configuration: try config(backend.baseURL), jitter: FixedJitter(value: 0))
        let warnings = Lines()
        let lock = try SQLiteWriteLock(path: path)
        let loop = Task { await worker.run(pollSeconds: 1, warn: { warnings.append($0) }) }
        #expect(await eventually(40) { warnings.all.contains { $0.contains("database is locked") } }, "\(warnings.all)")
        lock.release()
        // The next pass, a second later, delivers the night: the worker did not stop.
        #expect(try await eventually(30) { try await store.session(sourceID: id)?.syncStatus == .synced })
        #expect(backend.storedCount(id) == 1)
        #expect(warnings.all.count == 1, "\(warnings.all)")
        #expect(warnings.all.first?.hasPrefix("upload pass failed: ") == true)
        #expect(warnings.all.first?.hasSuffix("; trying again in 1 s") == true)
        loop.cancel()
        await loop.value
        try await backend.shutdown()
    }

    /// A proxy that redirects (http to https, a trailing slash): the HTTP client followed it
    /// as a GET, the backend's list answered 200, and every night read as stored while none
    /// was. The redirect is named, the pass stops and nothing is marked anything.
    @Test func aRedirectIsNamedAndNoNightReadsAsStored() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let store = try NightStore(path: dir.path("r.sqlite"), timeZone: Self.utc, clock: ManualClock(Self.t0))
        let ids = try await fill(store, count: 2)
        backend.script(ids[0], [.answer(302, "", headers: ["Location": backend.baseURL + "/api/v1/sleep?moved=1"], contentType: "text/plain")])
        let report = try await OutboxWorker(store: store, configuration: try config(backend.baseURL), jitter: FixedJitter(value: 0)).runOnce()
        #expect(report.stoppedBy == .misdirected(reason: "HTTP 302, a redirect to \(backend.baseURL)/api/v1/sleep?moved=1"))
        #expect(report.delivered.isEmpty && report.failed.isEmpty && report.willRetry.isEmpty)
        #expect(backend.received.count == 1, "the redirect was followed: \(backend.received.map(\.sourceID))")
        #expect(try await store.outboxEvents().map(\.attempts) == [0, 0])
        #expect(try await store.session(sourceID: ids[0])?.syncStatus != .synced)
        try await backend.shutdown()
    }

    /// A 429 with `Retry-After` is waited out, and the rest of the backlog is not posted into it.
    @Test func aBackendAskingToWaitIsWaitedFor() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let clock = ManualClock(Self.t0)
        let store = try NightStore(path: dir.path("w.sqlite"), timeZone: Self.utc, clock: clock)
        let ids = try await fill(store, count: 3)
        backend.script(ids[0], [.answer(429, #"{"error":"slow down"}"#, headers: ["Retry-After": "900"], contentType: "application/json")])
        let report = try await OutboxWorker(store: store, configuration: try config(backend.baseURL), jitter: FixedJitter(value: 0)).runOnce()
        #expect(report.stoppedBy == .busy(reason: "HTTP 429: slow down", retryAfter: 900))
        #expect(report.willRetry == [UploadFailure(sourceID: ids[0], reason: "HTTP 429: slow down", nextAttemptAt: clock.unixSeconds() + 900)])
        #expect(report.leftForNextPass == 2)
        #expect(backend.received.count == 1)
        try await backend.shutdown()
    }

    /// A backend that cannot be reached for longer than the attempts last (a weekend) used to
    /// fail every night for good; no answer at all is not the session's fault.
    @Test func anOutageNeverUsesUpTheAttempts() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let url = backend.baseURL
        try await backend.shutdown()
        let clock = ManualClock(Self.t0)
        let store = try NightStore(path: dir.path("o.sqlite"), timeZone: Self.utc, clock: clock)
        let id = try await fill(store, count: 1)[0]
        let worker = OutboxWorker(store: store, configuration: try config(url, maxAttempts: 2), jitter: FixedJitter(value: 0))
        for _ in 0..<4 {
            let report = try await worker.runOnce()
            #expect(report.failed.isEmpty && report.willRetry.count == 1, "\(report)")
            clock.advance(by: 3600)
        }
        #expect(try await store.outboxEvents().map(\.status) == [.pending])
        #expect(try await store.outboxEvents().map(\.attempts) == [0])
        #expect(try await store.session(sourceID: id)?.syncStatus != .failed)
        // Back, and answering one error while it restarts: a retry, not a session failed for
        // good on attempts the outage used up.
        let back = try await ScriptedBackend()
        back.script(id, [.status(500, #"{"error":"starting"}"#)])
        let after = try await OutboxWorker(store: store, configuration: try config(back.baseURL, maxAttempts: 2), jitter: FixedJitter(value: 0)).runOnce()
        #expect(after.failed.isEmpty && after.willRetry.count == 1, "\(after)")
        try await back.shutdown()
    }

    /// A backend that answers 500 is told once, as an unreachable one is, not left silent
    /// until the sessions fail for good hours later; passes that try nothing (every session
    /// waiting out its backoff) neither repeat it nor say that uploads work again.
    @Test(.timeLimit(.minutes(1)))
    func aFailingBackendIsWarnedAboutOnce() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let store = try NightStore(path: dir.path("f.sqlite"), timeZone: Self.utc, clock: ManualClock(Self.t0))
        let id = try await fill(store, count: 1)[0]
        backend.script(id, Array(repeating: .status(500, #"{"error":"database unavailable"}"#), count: 5))
        let worker = OutboxWorker(store: store, configuration: try config(backend.baseURL), jitter: FixedJitter(value: 0))
        let warnings = Lines()
        let loop = Task { await worker.run(pollSeconds: 1, warn: { warnings.append($0) }) }
        #expect(await eventually(20) { !warnings.all.isEmpty })
        try await Task.sleep(for: .seconds(3))   // three more passes, each finding nothing due
        loop.cancel()
        await loop.value
        #expect(warnings.all == ["the backend at \(backend.baseURL) answers HTTP 500: database unavailable; "
                                 + "sessions stay queued and are tried again with backoff"], "\(warnings.all)")
        #expect(backend.received.count == 1)
        try await backend.shutdown()
    }

    /// A wrong or rotated token used to mark the whole backlog failed in one pass.
    @Test func aRefusedTokenStopsThePassAndLeavesEveryEventQueued() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let clock = ManualClock(Self.t0)
        let store = try NightStore(path: dir.path("t.sqlite"), timeZone: Self.utc, clock: clock)
        let ids = try await fill(store, count: 3)
        for id in ids { backend.script(id, [.status(401, #"{"success":false,"error":"invalid token"}"#)]) }
        let worker = OutboxWorker(store: store, configuration: try config(backend.baseURL), jitter: FixedJitter(value: 0))

        let report = try await worker.runOnce()
        #expect(report.stoppedBy == .unauthorized(reason: "HTTP 401: invalid token"))
        #expect(report.failed.isEmpty && report.willRetry.isEmpty && report.deliveredCount == 0)
        #expect(report.leftForNextPass == 3)
        #expect(backend.received.count == 1)   // one request, not one per session
        let events = try await store.outboxEvents()
        #expect(events.map(\.status) == [.pending, .pending, .pending])
        #expect(events.map(\.attempts) == [0, 0, 0])   // no attempt spent on a bad token
        #expect(events.allSatisfy { $0.nextAttemptAt <= clock.unixSeconds() })
        for id in ids { #expect(try await store.session(sourceID: id)?.syncStatus == .pending) }

        // 403 alike; then the token is fixed on the server and the backlog goes through.
        backend.script(ids[0], [.status(403, "")])
        let forbidden = try await worker.runOnce()
        #expect(forbidden.stoppedBy == .unauthorized(reason: "HTTP 403") && forbidden.failed.isEmpty)
        backend.state.withLockedValue { $0.script = [:] }
        let fixed = try await worker.runOnce()
        #expect(Set(fixed.delivered) == Set(ids) && fixed.stoppedBy == nil)
        try await backend.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func theDaemonLoopWarnsOnceAboutARefusedTokenAndNamesTheFix() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let store = try NightStore(path: dir.path("d.sqlite"), timeZone: Self.utc, clock: ManualClock(Self.t0))
        let ids = try await fill(store, count: 2)
        backend.script(ids[0], Array(repeating: .status(401, ""), count: 3))
        let worker = OutboxWorker(store: store, configuration: try config(backend.baseURL), jitter: FixedJitter(value: 0))
        let warnings = Lines()
        let loop = Task { await worker.run(pollSeconds: 1, warn: { warnings.append($0) }) }
        #expect(await eventually(30) { ids.allSatisfy { backend.storedCount($0) == 1 } })
        loop.cancel()
        await loop.value
        #expect(backend.received.count == 5)   // three refused, then both delivered
        #expect(warnings.all == [
            "the backend at \(backend.baseURL) refused the upload token (HTTP 401): check upload.token (or PODBRIDGE_UPLOAD_TOKEN / PODBRIDGE_BACKEND_TOKEN); "
                + "no session was marked failed, they stay queued; trying again every 1 s",
        ])
        #expect(try await store.outboxSummary().failed == 0)
        try await backend.shutdown()
    }

    /// Given up after the maximum attempts used to be a log line only.
    @Test(.timeLimit(.minutes(1)))
    func aSessionGivenUpIsAWarningNamingRetryFailed() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend()
        let store = try NightStore(path: dir.path("g.sqlite"), timeZone: Self.utc, clock: ManualClock(Self.t0))
        let id = try await fill(store, count: 1)[0]
        backend.script(id, [.status(503, "")])
        let worker = OutboxWorker(store: store, configuration: try config(backend.baseURL, maxAttempts: 1), jitter: FixedJitter(value: 0))
        let warnings = Lines()
        let loop = Task { await worker.run(pollSeconds: 1, warn: { warnings.append($0) }) }
        #expect(await eventually(30) { !warnings.all.isEmpty })
        loop.cancel()
        await loop.value
        #expect(warnings.all == [
            "upload of 1 session failed for good (\(id): gave up after 1 attempts; last: HTTP 503); "
                + "once the cause is fixed, `podbridge sync --retry-failed` queues failed sessions again",
        ])
        try await backend.shutdown()
    }

    /// A server that takes the connection and never answers.
    @Test func aTimeoutSaysSoInPlainWords() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let backend = try await ScriptedBackend(delay: .seconds(10))
        let clock = ManualClock(Self.t0)
        let store = try NightStore(path: dir.path("o.sqlite"), timeZone: Self.utc, clock: clock)
        let ids = try await fill(store, count: 2)
        let worker = OutboxWorker(store: store, configuration: try config(backend.baseURL, requestTimeoutSeconds: 1), jitter: FixedJitter(value: 0))
        let report = try await worker.runOnce()
        let reason = "no answer from \(backend.baseURL) within 1 s (timed out)"
        #expect(report.willRetry == [UploadFailure(sourceID: ids[0], reason: reason, nextAttemptAt: clock.unixSeconds() + 5)])
        #expect(report.stoppedBy == .unreachable(reason: reason) && report.leftForNextPass == 1)
        try await backend.shutdown()
    }

    @Test func networkErrorsReadAsPlainWords() throws {
        let base = "https://sleep.example.com"
        #expect(NetworkFailure.describe(SocketAddressError.unknown(host: "sleep.example.com", port: 443), baseURL: base, timeoutSeconds: 30)
            == "cannot connect to https://sleep.example.com: unknown host 'sleep.example.com'")
        #expect(NetworkFailure.describe(IOError(errnoCode: ECONNREFUSED, reason: "connect"), baseURL: base, timeoutSeconds: 30)
            == "cannot connect to https://sleep.example.com: connection refused")
        #expect(NetworkFailure.describe(HTTPClientError.deadlineExceeded, baseURL: base, timeoutSeconds: 30)
            == "no answer from https://sleep.example.com within 30 s (timed out)")
    }

    /// An unknown host, through the real resolver (`.invalid` never resolves, RFC 6761).
    @Test func anUnknownHostIsNamed() async throws {
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("h.sqlite"), timeZone: Self.utc, clock: ManualClock(Self.t0))
        _ = try await fill(store, count: 1)
        let worker = OutboxWorker(store: store, configuration: try config("http://podbridge-test.invalid:8080", requestTimeoutSeconds: 10))
        let report = try await worker.runOnce()
        // NXDOMAIN from the resolver; a machine whose resolver fails otherwise says it could not look it up.
        let reason = report.willRetry.first?.reason ?? ""
        #expect(reason == "cannot connect to http://podbridge-test.invalid:8080: unknown host 'podbridge-test.invalid'"
                || reason.hasPrefix("cannot connect to http://podbridge-test.invalid:8080: cannot look up host 'podbridge-test.invalid'"),
                "\(reason)")
    }

    @Test func thePollIntervalIsClampedToSomethingSleepable() async throws {
        #expect(OutboxWorker.pollInterval(seconds: 60) == 60)
        #expect(OutboxWorker.pollInterval(seconds: 0) == 1)      // spun before
        #expect(OutboxWorker.pollInterval(seconds: -5) == 1)
        #expect(OutboxWorker.pollInterval(seconds: 0.2) == 1)
        #expect(OutboxWorker.pollInterval(seconds: 1.5) == 2)
        #expect(OutboxWorker.pollInterval(seconds: 1e300) == 86_400)   // trapped converting to Int64 before
        #expect(OutboxWorker.pollInterval(seconds: .infinity) == 86_400)
        #expect(OutboxWorker.pollInterval(seconds: .nan) == 60)
        // And the loop takes such a value: it sleeps, and a cancellation still ends it.
        let dir = try TempDir()
        defer { dir.cleanup() }
        let store = try NightStore(path: dir.path("p.sqlite"), timeZone: Self.utc, clock: ManualClock(Self.t0))
        let worker = OutboxWorker(store: store, configuration: try config("http://127.0.0.1:9"))
        let loop = Task { await worker.run(pollSeconds: 1e300) }
        try await Task.sleep(for: .milliseconds(200))
        loop.cancel()
        await loop.value
        #expect(OutboxWorker.duration(45) == "45 s" && OutboxWorker.duration(240) == "4 min" && OutboxWorker.duration(7500) == "2 h 5 min")
    }
}
