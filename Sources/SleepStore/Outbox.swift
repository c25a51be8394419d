import Foundation
import GRDB
import SleepDomain

/// State of one outbox event (one per final session).
public enum OutboxStatus: String, Sendable, Codable {
    case pending
    /// Claimed by a worker whose lease has not expired.
    case inFlight = "in_flight"
    case delivered
    case failed
}

/// An outbox event claimed by a worker: the lease token plus the session and blocks to post.
/// Only the holder of `token` can complete it; when the lease expires (the worker died) any
/// worker may claim it again, and the backend's `source_id` deduplication makes that safe.
public struct OutboxClaim: Sendable, Hashable {
    public var eventID: Int64
    public var token: String
    /// 1 for the first attempt.
    public var attempt: Int
    public var session: StoredSession
    public var blocks: [StageBlock]
}

/// Counts of outbox events by state (for `podbridge sync` and status pages).
public struct OutboxSummary: Sendable, Hashable {
    public var pendingDue: Int
    public var pendingLater: Int
    public var inFlight: Int
    public var delivered: Int
    public var failed: Int
    /// Earliest `next_attempt_at` among pending events, if any.
    public var nextAttemptAt: Int64?
}

/// One outbox row as stored.
public struct OutboxEvent: Sendable, Hashable {
    public var eventID: Int64
    public var sessionID: Int64
    public var sourceID: String
    public var status: OutboxStatus
    public var attempts: Int
    public var nextAttemptAt: Int64
    public var lastError: String?
}

extension SleepStore {
    /// Atomically claims the oldest due event: a pending one whose time has come, or an
    /// in-flight one whose lease expired. Returns nil when nothing is due.
    /// The claim and the attempt count are committed before the post starts, so a crash
    /// mid-post neither loses the event nor lets two workers post it at once.
    public func claimNextDueEvent(leaseSeconds: Int64, excluding: Set<Int64> = []) throws -> OutboxClaim? {
        let now = clock.unixSeconds()
        let token = UUID().uuidString
        return try pool.write { db -> OutboxClaim? in
            let excluded = excluding.isEmpty ? "" : "AND id NOT IN (\(excluding.map(String.init).joined(separator: ",")))"
            guard let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT id, session_id, attempts FROM outbox
                    WHERE ((status = 'pending' AND next_attempt_at <= ?) OR (status = 'in_flight' AND claimed_until <= ?))
                    \(excluded)
                    ORDER BY next_attempt_at, id LIMIT 1
                    """,
                arguments: [now, now])
            else { return nil }
            let eventID: Int64 = row["id"]
            let sessionID: Int64 = row["session_id"]
            let attempt: Int = row["attempts"] + 1
            try db.execute(
                sql: """
                    UPDATE outbox SET status = 'in_flight', claim_token = ?, claimed_until = ?,
                        attempts = ?, updated_at = ? WHERE id = ?
                    """,
                arguments: [token, now + max(1, leaseSeconds), attempt, now, eventID])
            guard let sessionRow = try Row.fetchOne(
                db, sql: "SELECT \(Self.sessionColumns) FROM sessions WHERE id = ?", arguments: [sessionID])
            else { return nil }
            let blocks = try Row.fetchAll(
                db,
                sql: "SELECT stage, start_time, end_time FROM stage_blocks WHERE session_id = ? ORDER BY stage <> 'in_bed', start_time",
                arguments: [sessionID]
            ).compactMap { r in
                SleepCategory(rawValue: r["stage"]).map { StageBlock(stage: $0, start: r["start_time"], end: r["end_time"]) }
            }
            return OutboxClaim(
                eventID: eventID, token: token, attempt: attempt,
                session: Self.session(from: sessionRow), blocks: blocks)
        }
    }

    /// Marks a claimed event delivered and stores the backend's session id on the session.
    /// Returns false when the claim was lost (lease expired and another worker took it).
    @discardableResult
    public func markDelivered(_ claim: OutboxClaim, backendSessionID: String?) throws -> Bool {
        let now = clock.unixSeconds()
        return try pool.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET status = 'delivered', last_error = NULL, claim_token = NULL,
                        claimed_until = NULL, updated_at = ? WHERE id = ? AND claim_token = ?
                    """,
                arguments: [now, claim.eventID, claim.token])
            guard db.changesCount == 1 else { return false }
            try db.execute(
                sql: """
                    UPDATE sessions SET sync_status = 'synced', sync_error = NULL,
                        backend_session_id = coalesce(?, backend_session_id) WHERE id = ?
                    """,
                arguments: [backendSessionID, claim.session.id])
            return true
        }
    }

    /// Marks a claimed event failed for good, keeping the reason on the event and the session.
    @discardableResult
    public func markFailed(_ claim: OutboxClaim, reason: String) throws -> Bool {
        let now = clock.unixSeconds()
        return try pool.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET status = 'failed', last_error = ?, claim_token = NULL,
                        claimed_until = NULL, updated_at = ? WHERE id = ? AND claim_token = ?
                    """,
                arguments: [reason, now, claim.eventID, claim.token])
            guard db.changesCount == 1 else { return false }
            try db.execute(
                sql: "UPDATE sessions SET sync_status = 'failed', sync_error = ? WHERE id = ?",
                arguments: [reason, claim.session.id])
            return true
        }
    }

    /// Returns a claimed event to pending, due at `nextAttemptAt`, keeping the last error.
    @discardableResult
    public func scheduleRetry(_ claim: OutboxClaim, reason: String, nextAttemptAt: Int64) throws -> Bool {
        let now = clock.unixSeconds()
        return try pool.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET status = 'pending', last_error = ?, next_attempt_at = ?, claim_token = NULL,
                        claimed_until = NULL, updated_at = ? WHERE id = ? AND claim_token = ?
                    """,
                arguments: [reason, nextAttemptAt, now, claim.eventID, claim.token])
            return db.changesCount == 1
        }
    }

    /// Gives a claim back unattempted (the worker is shutting down before posting it).
    @discardableResult
    public func releaseClaim(_ claim: OutboxClaim) throws -> Bool {
        let now = clock.unixSeconds()
        return try pool.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET status = 'pending', attempts = max(0, attempts - 1), claim_token = NULL,
                        claimed_until = NULL, updated_at = ? WHERE id = ? AND claim_token = ?
                    """,
                arguments: [now, claim.eventID, claim.token])
            return db.changesCount == 1
        }
    }

    /// Puts every failed event back in the queue (after the cause was fixed, e.g. a token).
    @discardableResult
    public func requeueFailedEvents() throws -> Int {
        let now = clock.unixSeconds()
        return try pool.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ?
                    WHERE status = 'failed'
                    """,
                arguments: [now, now])
            let count = db.changesCount
            try db.execute(sql: """
                UPDATE sessions SET sync_status = 'pending'
                WHERE sync_status = 'failed' AND id IN (SELECT session_id FROM outbox WHERE status = 'pending')
                """)
            return count
        }
    }

    public func outboxSummary() throws -> OutboxSummary {
        let now = clock.unixSeconds()
        return try pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT
                        sum(status = 'pending' AND next_attempt_at <= ?) AS due,
                        sum(status = 'pending' AND next_attempt_at > ?) AS later,
                        sum(status = 'in_flight') AS flight,
                        sum(status = 'delivered') AS delivered,
                        sum(status = 'failed') AS failed,
                        min(CASE WHEN status = 'pending' THEN next_attempt_at END) AS next
                    FROM outbox
                    """,
                arguments: [now, now])
            return OutboxSummary(
                pendingDue: row?["due"] ?? 0, pendingLater: row?["later"] ?? 0, inFlight: row?["flight"] ?? 0,
                delivered: row?["delivered"] ?? 0, failed: row?["failed"] ?? 0, nextAttemptAt: row?["next"])
        }
    }

    /// All outbox events, oldest first.
    public func outboxEvents() throws -> [OutboxEvent] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT o.id, o.session_id, s.source_id, o.status, o.attempts, o.next_attempt_at, o.last_error
                    FROM outbox o JOIN sessions s ON s.id = o.session_id ORDER BY o.id
                    """
            ).map { row in
                OutboxEvent(
                    eventID: row["id"], sessionID: row["session_id"], sourceID: row["source_id"],
                    status: OutboxStatus(rawValue: row["status"]) ?? .pending, attempts: row["attempts"],
                    nextAttemptAt: row["next_attempt_at"], lastError: row["last_error"])
            }
        }
    }
}
