import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SleepStore

/// An upload that did not go through, with the reason kept.
package struct UploadFailure: Sendable, Hashable {
    package var sourceID: String
    package var reason: String
    /// For a retry: when the next attempt is due (Unix seconds on the store's clock).
    package var nextAttemptAt: Int64?

    package init(sourceID: String, reason: String, nextAttemptAt: Int64? = nil) {
        self.sourceID = sourceID
        self.reason = reason
        self.nextAttemptAt = nextAttemptAt
    }
}

/// Why a pass stopped before trying every due event.
package enum PassStop: Sendable, Hashable {
    /// No answer from the backend at all (connection refused, unknown host, timeout): the
    /// other due events would only wait out the same failure.
    case unreachable(reason: String)
    /// 401/403: the backend does not accept the token. A configuration problem, not the
    /// session's: the event is handed back unattempted and nothing is marked failed.
    case unauthorized(reason: String)
    /// A redirect, 404 or 405: the base URL does not lead to the sleep endpoint. Handled as
    /// `unauthorized` (a configuration problem; nothing marked failed).
    case misdirected(reason: String)
    /// The backend asked to be left alone for a while (429, or a `Retry-After`): the event
    /// waits at least that long, and the others are not posted into the same refusal.
    case busy(reason: String, retryAfter: Int64)
}

/// What one pass of the worker did.
package struct SyncReport: Sendable, Hashable {
    /// Posted and stored by the backend (2xx).
    package var delivered: [String] = []
    /// The backend already had them (409): delivered by an earlier attempt.
    package var alreadyPresent: [String] = []
    /// Refused (4xx) or given up after the maximum attempts; kept as failed with the reason.
    package var failed: [UploadFailure] = []
    /// Retryable failures, due again later (backoff).
    package var willRetry: [UploadFailure] = []
    /// Pending events not due yet, or claimed by another live worker, left for later.
    package var skipped: Int = 0
    /// Why the pass stopped early, if it did.
    package var stoppedBy: PassStop?
    /// Events due now that this pass left for the next one because it stopped early.
    package var leftForNextPass: Int = 0
    /// Claims lost because the lease ran out mid-post and another worker took the event.
    package var lostClaims: Int = 0

    package init() {}

    /// Events that ended delivered in this pass (2xx and 409).
    package var deliveredCount: Int { delivered.count + alreadyPresent.count }
}

/// The outbox worker: posts pending sleep sessions to the backend, one event at a time.
///
/// Each event is claimed in the database (with a lease) before its post starts, so neither
/// another task of this worker, nor another worker, nor another process posts the same
/// session at the same time; the claim, the attempt count and the outcome are all in the
/// database, so a restart loses nothing: a claim left by a dead worker is taken up again
/// when its lease runs out, and the backend's `source_id` deduplication (409) turns a post
/// that got through before the crash into "delivered".
package final class OutboxWorker: Sendable {
    package let store: NightStore
    package let configuration: UploadConfiguration
    let client: HTTPClient
    let jitter: any JitterSource
    let logger: Logger

    package init(
        store: NightStore, configuration: UploadConfiguration, client: HTTPClient = UploadHTTPClient.shared,
        jitter: any JitterSource = SystemJitter(), logger: Logger = Logger(label: "podbridge.upload")
    ) {
        self.store = store
        self.configuration = configuration
        self.client = client
        self.jitter = jitter
        self.logger = logger
    }

    /// One pass: every event due now is attempted once (the `podbridge sync` run).
    /// Store errors are thrown; HTTP and network failures are outcomes, not errors.
    package func runOnce() async throws -> SyncReport {
        var report = SyncReport()
        var seen: Set<Int64> = []
        while !Task.isCancelled,
              let claim = try await store.claimNextDueEvent(leaseSeconds: configuration.leaseSeconds, excluding: seen) {
            seen.insert(claim.eventID)
            let (outcome, unreachable, retryAfter) = await post(claim)
            if Task.isCancelled, case .retryable = outcome {
                // Shutting down mid-post: hand the event back; if the post got through, the
                // next attempt receives 409 and records it as delivered.
                try await store.releaseClaim(claim)
                break
            }
            if case let .unauthorized(reason) = outcome {
                // The token is wrong, not the session: give the event back with its attempt
                // unspent and stop, instead of marking the whole backlog failed.
                try await store.releaseClaim(claim)
                report.stoppedBy = .unauthorized(reason: reason)
                break
            }
            if case let .misdirected(reason) = outcome {
                try await store.releaseClaim(claim)
                report.stoppedBy = .misdirected(reason: reason)
                break
            }
            try await record(outcome, for: claim, unreachable: unreachable, retryAfter: retryAfter, into: &report)
            if let retryAfter, case let .retryable(reason) = outcome {
                report.stoppedBy = .busy(reason: reason, retryAfter: retryAfter)
                break
            }
            // The backend cannot be reached at all (refused, timed out): the other due
            // events would only wait out the same failure; they stay due for the next pass.
            if unreachable, case let .retryable(reason) = outcome {
                report.stoppedBy = .unreachable(reason: reason)
                break
            }
        }
        let summary = try await store.outboxSummary()
        let retried = report.willRetry.count
        if report.stoppedBy != nil {
            report.leftForNextPass = summary.pendingDue
            report.skipped = max(0, summary.pendingLater + summary.inFlight - retried)
        } else {
            report.skipped = max(0, summary.pendingDue + summary.pendingLater + summary.inFlight - retried)
        }
        return report
    }

    /// Runs passes until the task is cancelled, sleeping until the next retry is due or
    /// `pollSeconds` pass (new sessions are picked up then). Never returns otherwise: a pass
    /// that fails (the database locked by another process past its busy timeout, a full
    /// disk) is reported through `warn` and tried again after `pollSeconds`, so the daemon's
    /// uploads outlive a passing problem. A pass stopped by an unreachable backend or a
    /// refused token also waits `pollSeconds`. A problem is reported once, not at every
    /// pass; sessions that failed for good are reported with the command that re-queues them.
    package func run(pollSeconds: Double = 60, warn: (@Sendable (String) -> Void)? = nil) async {
        let warn = warn ?? { [logger] in logger.warning("\($0)") }
        let poll = Self.pollInterval(seconds: pollSeconds)
        var lastProblem: String?
        while !Task.isCancelled {
            var wait = poll
            var problem: String?
            do {
                let report = try await runOnce()
                let attempted = report.deliveredCount + report.failed.count + report.willRetry.count
                if attempted > 0 {
                    logger.info("upload pass", metadata: [
                        "delivered": "\(report.deliveredCount)", "failed": "\(report.failed.count)",
                        "retry": "\(report.willRetry.count)",
                    ])
                }
                if !report.failed.isEmpty { warn(Self.failedWarning(report.failed)) }
                switch report.stoppedBy {
                case let .unauthorized(reason)?:
                    problem = Self.unauthorizedMessage(baseURL: configuration.baseURL, reason: reason,
                                                       tokenSent: configuration.bearerToken != nil,
                                                       fix: "check upload.token (or PODBRIDGE_UPLOAD_TOKEN / PODBRIDGE_BACKEND_TOKEN)")
                        + "; trying again every \(Self.duration(poll))"
                case let .misdirected(reason)?:
                    problem = Self.misdirectedMessage(baseURL: configuration.baseURL, reason: reason,
                                                      fix: "check upload.baseURL (or PODBRIDGE_UPLOAD_URL)")
                        + "; trying again every \(Self.duration(poll))"
                case let .unreachable(reason)?:
                    problem = "cannot upload: \(reason); sessions stay queued, trying again in \(Self.duration(poll))"
                case let .busy(reason, retryAfter)?:
                    wait = max(poll, retryAfter)
                    problem = "the backend at \(configuration.baseURL) asks to wait (\(reason)); sessions stay queued, trying again in \(Self.duration(wait))"
                case nil:
                    if let next = try await store.outboxSummary().nextAttemptAt {
                        wait = min(poll, max(1, next - store.clock.unixSeconds()))
                    }
                    // A backend that answers with errors is a problem too (it used to be
                    // silent until the sessions failed for good, hours later).
                    if report.deliveredCount == 0, let first = report.willRetry.first {
                        problem = "the backend at \(configuration.baseURL) answers \(first.reason); sessions stay queued "
                            + "and are tried again with backoff"
                    }
                }
                // A pass that tried nothing (every event waiting out its backoff) says nothing
                // about the backend: the last problem stands ("uploads work again" was logged
                // between every two refused connections).
                if report.stoppedBy == nil, attempted == 0 { problem = lastProblem }
            } catch {
                if Task.isCancelled { return }
                problem = "upload pass failed: \(error); trying again in \(Self.duration(poll))"
            }
            if let problem, problem != lastProblem { warn(problem) }
            if problem == nil, lastProblem != nil { logger.notice("uploads work again") }
            lastProblem = problem
            try? await Task.sleep(for: .seconds(wait))
        }
    }

    /// The poll interval in whole seconds, safe for any configured value: at least 1 s (0 or
    /// a negative value would spin), at most a day; NaN and infinities fall back to a minute.
    package static func pollInterval(seconds: Double) -> Int64 {
        guard seconds.isFinite else { return seconds == .infinity ? 86_400 : 60 }
        return Int64(min(max(seconds, 1), 86_400).rounded(.up))
    }

    /// The one-line explanation of a refused token, naming what to fix.
    package static func unauthorizedMessage(baseURL: String, reason: String, tokenSent: Bool = true, fix: String) -> String {
        (tokenSent ? "the backend at \(baseURL) refused the upload token (\(reason)): \(fix); "
                   : "the backend at \(baseURL) asks for a token (\(reason)) and none is configured: \(fix); ")
            + "no session was marked failed, they stay queued"
    }

    /// The one-line explanation of a base URL that does not lead to the sleep endpoint.
    package static func misdirectedMessage(baseURL: String, reason: String, fix: String) -> String {
        "\(baseURL)/api/v1/sleep is not the backend's sleep endpoint (\(reason)): \(fix); "
            + "no session was marked failed, they stay queued"
    }

    /// One warning for the sessions that failed for good in a pass.
    static func failedWarning(_ failed: [UploadFailure]) -> String {
        let shown = failed.prefix(3).map { "\($0.sourceID): \($0.reason)" }.joined(separator: "; ")
        let more = failed.count > 3 ? "; and \(failed.count - 3) more" : ""
        let what = failed.count == 1 ? "1 session" : "\(failed.count) sessions"
        return "upload of \(what) failed for good (\(shown)\(more)); once the cause is fixed, "
            + "`podbridge sync --retry-failed` queues failed sessions again"
    }

    /// "45 s", "4 min", "2 h 5 min".
    package static func duration(_ seconds: Int64) -> String {
        if seconds < 120 { return "\(seconds) s" }
        let minutes = (seconds + 30) / 60
        if minutes < 120 { return "\(minutes) min" }
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }

    /// `unreachable`: no answer at all, which is the network's or the backend's outage, not
    /// the session's; it never uses up the attempts (a weekend's outage failed every night
    /// for good). `retryAfter`: the backend's `Retry-After`, the least wait before the next attempt.
    func record(_ outcome: UploadOutcome, for claim: OutboxClaim, unreachable: Bool = false, retryAfter: Int64? = nil,
                into report: inout SyncReport) async throws {
        let id = claim.session.sourceID
        var kept = true
        switch outcome {
        case let .delivered(backendID):
            kept = try await store.markDelivered(claim, backendSessionID: backendID)
            if kept { report.delivered.append(id) }
        case let .alreadyPresent(backendID):
            kept = try await store.markDelivered(claim, backendSessionID: backendID)
            if kept { report.alreadyPresent.append(id) }
        case let .rejected(reason):
            kept = try await store.markFailed(claim, reason: reason)
            if kept { report.failed.append(UploadFailure(sourceID: id, reason: reason)) }
        case .unauthorized, .misdirected:
            // Handled by the pass (the claim is released); never recorded against the session.
            kept = try await store.releaseClaim(claim)
        case let .retryable(reason):
            if claim.attempt >= configuration.maxAttempts, !unreachable {
                let gaveUp = "gave up after \(claim.attempt) attempts; last: \(reason)"
                kept = try await store.markFailed(claim, reason: gaveUp)
                if kept { report.failed.append(UploadFailure(sourceID: id, reason: gaveUp)) }
            } else {
                let delay = max(configuration.backoff.delay(afterAttempt: claim.attempt, unit: jitter.unit()), retryAfter ?? 0)
                let next = store.clock.unixSeconds() + delay
                kept = try await store.scheduleRetry(claim, reason: reason, nextAttemptAt: next, spent: !unreachable)
                if kept { report.willRetry.append(UploadFailure(sourceID: id, reason: reason, nextAttemptAt: next)) }
            }
        }
        if !kept { report.lostClaims += 1 }
    }

    /// Posts one claimed session and classifies the answer; `unreachable` is true when no
    /// answer could be had for a reason other than the server closing the connection;
    /// `retryAfter` is the wait a 429 or 503 asked for (a 429 without one waits a minute).
    func post(_ claim: OutboxClaim) async -> (outcome: UploadOutcome, unreachable: Bool, retryAfter: Int64?) {
        let body: Data
        do {
            body = try SleepUploadPayload(session: claim.session, blocks: claim.blocks, source: configuration.source).jsonData()
        } catch {
            return (.rejected(reason: "cannot encode session: \(error)"), false, nil)
        }
        var request = HTTPClientRequest(url: configuration.endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: claim.session.sourceID)
        if let token = configuration.bearerToken {
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
        }
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, timeout: .seconds(configuration.requestTimeoutSeconds))
            let buffer = try await response.body.collect(upTo: 1 << 20)
            let status = Int(response.status.code)
            let outcome = UploadOutcome.classify(status: status, body: Data(buffer.readableBytesView),
                                                 location: response.headers.first(name: "Location"))
            var retryAfter: Int64?
            if status == 429 || status == 503 {
                retryAfter = UploadOutcome.retryAfter(response.headers.first(name: "Retry-After"), now: store.clock.unixSeconds())
                if status == 429 { retryAfter = retryAfter ?? 60 }
            }
            return (outcome, false, retryAfter)
        } catch {
            let reason = NetworkFailure.describe(error, baseURL: configuration.baseURL,
                                                 timeoutSeconds: configuration.requestTimeoutSeconds)
            // A connection the server closed mid-request is this request's bad luck; anything
            // else (refused, unknown host, timed out) says the backend cannot be reached now.
            return (.retryable(reason: reason), !NetworkFailure.answeredInPart(error), nil)
        }
    }
}
