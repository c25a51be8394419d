import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SleepStore

/// An upload that did not go through, with the reason kept.
public struct UploadFailure: Sendable, Hashable {
    public var sourceID: String
    public var reason: String
}

/// What one pass of the worker did.
public struct SyncReport: Sendable, Hashable {
    /// Posted and stored by the backend (2xx).
    public var delivered: [String] = []
    /// The backend already had them (409): delivered by an earlier attempt.
    public var alreadyPresent: [String] = []
    /// Refused (4xx) or given up after the maximum attempts; kept as failed with the reason.
    public var failed: [UploadFailure] = []
    /// Retryable failures, due again later (backoff).
    public var willRetry: [UploadFailure] = []
    /// Pending events not due yet, or claimed by another live worker, left for later.
    public var skipped: Int = 0
    /// Claims lost because the lease ran out mid-post and another worker took the event.
    public var lostClaims: Int = 0

    public init() {}

    /// Events that ended delivered in this pass (2xx and 409).
    public var deliveredCount: Int { delivered.count + alreadyPresent.count }
}

/// The outbox worker: posts pending sleep sessions to the backend, one event at a time.
///
/// Each event is claimed in the database (with a lease) before its post starts, so neither
/// another task of this worker, nor another worker, nor another process posts the same
/// session at the same time; the claim, the attempt count and the outcome are all in the
/// database, so a restart loses nothing: a claim left by a dead worker is taken up again
/// when its lease runs out, and the backend's `source_id` deduplication (409) turns a post
/// that got through before the crash into "delivered".
public final class OutboxWorker: Sendable {
    public let store: SleepStore
    public let configuration: UploadConfiguration
    let client: HTTPClient
    let jitter: any JitterSource
    let logger: Logger

    public init(
        store: SleepStore, configuration: UploadConfiguration, client: HTTPClient = .shared,
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
    public func runOnce() async throws -> SyncReport {
        var report = SyncReport()
        var seen: Set<Int64> = []
        while !Task.isCancelled,
              let claim = try store.claimNextDueEvent(leaseSeconds: configuration.leaseSeconds, excluding: seen) {
            seen.insert(claim.eventID)
            let (outcome, unreachable) = await post(claim)
            if Task.isCancelled, case .retryable = outcome {
                // Shutting down mid-post: hand the event back; if the post got through, the
                // next attempt receives 409 and records it as delivered.
                try store.releaseClaim(claim)
                break
            }
            try record(outcome, for: claim, into: &report)
            // The backend cannot be reached at all (refused, timed out): the other due
            // events would only wait out the same deadline; they stay due for the next pass.
            if unreachable { break }
        }
        let summary = try store.outboxSummary()
        report.skipped = max(0, summary.pendingDue + summary.pendingLater + summary.inFlight - report.willRetry.count)
        return report
    }

    /// Runs passes until the task is cancelled, sleeping until the next retry is due or
    /// `pollSeconds` pass (new sessions are picked up then).
    public func run(pollSeconds: Int64 = 60) async throws {
        while !Task.isCancelled {
            let report = try await runOnce()
            if report.deliveredCount + report.failed.count + report.willRetry.count > 0 {
                logger.info("upload pass", metadata: [
                    "delivered": "\(report.deliveredCount)", "failed": "\(report.failed.count)",
                    "retry": "\(report.willRetry.count)",
                ])
            }
            var wait = pollSeconds
            if let next = try store.outboxSummary().nextAttemptAt {
                wait = min(wait, max(1, next - store.clock.unixSeconds()))
            }
            try? await Task.sleep(for: .seconds(wait))
        }
    }

    func record(_ outcome: UploadOutcome, for claim: OutboxClaim, into report: inout SyncReport) throws {
        let id = claim.session.sourceID
        var kept = true
        switch outcome {
        case let .delivered(backendID):
            kept = try store.markDelivered(claim, backendSessionID: backendID)
            if kept { report.delivered.append(id) }
        case let .alreadyPresent(backendID):
            kept = try store.markDelivered(claim, backendSessionID: backendID)
            if kept { report.alreadyPresent.append(id) }
        case let .rejected(reason):
            kept = try store.markFailed(claim, reason: reason)
            if kept { report.failed.append(UploadFailure(sourceID: id, reason: reason)) }
            logger.warning("upload refused", metadata: ["source_id": "\(id)", "reason": "\(reason)"])
        case let .retryable(reason):
            if claim.attempt >= configuration.maxAttempts {
                let final = "gave up after \(claim.attempt) attempts; last: \(reason)"
                kept = try store.markFailed(claim, reason: final)
                if kept { report.failed.append(UploadFailure(sourceID: id, reason: final)) }
            } else {
                let delay = configuration.backoff.delay(afterAttempt: claim.attempt, unit: jitter.unit())
                kept = try store.scheduleRetry(claim, reason: reason, nextAttemptAt: store.clock.unixSeconds() + delay)
                if kept { report.willRetry.append(UploadFailure(sourceID: id, reason: reason)) }
            }
        }
        if !kept { report.lostClaims += 1 }
    }

    /// Posts one claimed session and classifies the answer; `unreachable` is true when no
    /// answer could be had for a reason other than the server closing the connection.
    func post(_ claim: OutboxClaim) async -> (outcome: UploadOutcome, unreachable: Bool) {
        let body: Data
        do {
            body = try SleepUploadPayload(session: claim.session, blocks: claim.blocks, source: configuration.source).jsonData()
        } catch {
            return (.rejected(reason: "cannot encode session: \(error)"), false)
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
            return (UploadOutcome.classify(status: Int(response.status.code), body: Data(buffer.readableBytesView)), false)
        } catch let error as HTTPClientError where error == .remoteConnectionClosed {
            return (.retryable(reason: "network: connection closed before a response"), false)
        } catch {
            return (.retryable(reason: "network: \(error)"), true)
        }
    }
}
