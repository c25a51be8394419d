import Foundation
import GRDB
import SleepDomain

/// State of one outbox event (one per final session).
package enum OutboxStatus: String, Sendable, Codable {
    case pending
    /// Claimed by a worker whose lease has not expired.
    case inFlight = "in_flight"
    case delivered
    case failed
}

/// An outbox event claimed by a worker: the lease token plus the session and blocks to post.
/// Only the holder of `token` can complete it; when the lease expires (the worker died) any
/// worker may claim it again, and the backend's `source_id` deduplication makes that safe.
package struct OutboxClaim: Sendable, Hashable {
    package var eventID: Int64
    package var token: String
    /// 1 for the first attempt.
    package var attempt: Int
    package var session: StoredSession
    package var blocks: [StageBlock]
}

/// Counts of outbox events by state (for `podbridge sync` and status pages).
package struct OutboxSummary: Sendable, Hashable {
    package var pendingDue: Int
    package var pendingLater: Int
    package var inFlight: Int
    package var delivered: Int
    package var failed: Int
    /// Earliest `next_attempt_at` among pending events, if any.
    package var nextAttemptAt: Int64?
}

/// One outbox event as stored (the `outbox` table's row), with its session's source id.
package struct OutboxEvent: Sendable, Hashable {
    /// 0 until stored (SQLite assigns it; AUTOINCREMENT starts at 1).
    package var eventID: Int64
    package var sessionID: Int64
    /// The session's source id: read with the event (its session's column), never written.
    package var sourceID: String
    /// `sleep_session`, the one kind of event.
    package var eventType: String
    package var status: OutboxStatus
    package var attempts: Int
    package var nextAttemptAt: Int64
    package var lastError: String?
    /// The lease of the worker posting it (`in_flight` only).
    package var claimToken: String?
    package var claimedUntil: Int64?
    package var createdAt: Int64
    package var updatedAt: Int64

    static let sleepSessionEvent = "sleep_session"
}

extension OutboxEvent: FetchableRecord, MutablePersistableRecord {
    package static let databaseTableName = "outbox"
    static let session = belongsTo(StoredSession.self)
    package enum Columns {
        static let id = Column("id"), sessionID = Column("session_id"), eventType = Column("event_type")
        static let status = Column("status"), attempts = Column("attempts"), nextAttemptAt = Column("next_attempt_at")
        static let lastError = Column("last_error"), claimToken = Column("claim_token")
        static let claimedUntil = Column("claimed_until"), createdAt = Column("created_at")
        static let updatedAt = Column("updated_at")
        /// The session's, joined by `withSource`.
        static let sourceID = StoredSession.Columns.sourceID
    }

    /// Events with their session's source id (every event has its session: the outbox row is
    /// deleted with it). The one way events are read.
    static var withSource: QueryInterfaceRequest<OutboxEvent> {
        OutboxEvent.annotated(withRequired: session.select(Columns.sourceID))
    }

    /// Throws for a row read without its session's source id (not through `withSource`).
    package init(row: Row) throws {
        guard let sourceID: String = row[Columns.sourceID] else {
            throw StoreError.unreadableRow(table: Self.databaseTableName, reason: "read without its session's source_id")
        }
        self.init(eventID: row[Columns.id], sessionID: row[Columns.sessionID], sourceID: sourceID,
                  eventType: row[Columns.eventType], status: OutboxStatus(rawValue: row[Columns.status]) ?? .pending,
                  attempts: row[Columns.attempts], nextAttemptAt: row[Columns.nextAttemptAt],
                  lastError: row[Columns.lastError], claimToken: row[Columns.claimToken],
                  claimedUntil: row[Columns.claimedUntil], createdAt: row[Columns.createdAt],
                  updatedAt: row[Columns.updatedAt])
    }

    package func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = eventID == 0 ? nil : eventID
        container[Columns.sessionID] = sessionID
        container[Columns.eventType] = eventType
        container[Columns.status] = status.rawValue
        container[Columns.attempts] = attempts
        container[Columns.nextAttemptAt] = nextAttemptAt
        container[Columns.lastError] = lastError
        container[Columns.claimToken] = claimToken
        container[Columns.claimedUntil] = claimedUntil
        container[Columns.createdAt] = createdAt
        container[Columns.updatedAt] = updatedAt
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { eventID = inserted.rowID }
}

extension NightStore {
    /// Queues a session's upload: a new event, or an existing pending or failed one made due
    /// again from its first attempt. An in-flight (or delivered) one is left to its worker,
    /// so no two posts of the session ever run at once.
    static func queueUpload(_ db: Database, sessionID: Int64, sourceID: String, now: Int64) throws {
        typealias C = OutboxEvent.Columns
        guard var event = try OutboxEvent.withSource.filter(C.sessionID == sessionID).fetchOne(db) else {
            var event = OutboxEvent(eventID: 0, sessionID: sessionID, sourceID: sourceID,
                                    eventType: OutboxEvent.sleepSessionEvent, status: .pending, attempts: 0,
                                    nextAttemptAt: now, lastError: nil, claimToken: nil, claimedUntil: nil,
                                    createdAt: now, updatedAt: now)
            try event.insert(db)
            return
        }
        guard event.status == .pending || event.status == .failed else { return }
        event.status = .pending
        event.attempts = 0
        event.nextAttemptAt = now
        event.lastError = nil
        event.updatedAt = now
        try event.update(db)
    }

    /// The event `claim` names, if the claim still holds it.
    static func claimed(_ claim: OutboxClaim) -> QueryInterfaceRequest<OutboxEvent> {
        OutboxEvent.filter(OutboxEvent.Columns.id == claim.eventID && OutboxEvent.Columns.claimToken == claim.token)
    }

    /// Atomically claims the oldest due event: a pending one whose time has come, or an
    /// in-flight one whose lease expired. Returns nil when nothing is due.
    /// The claim and the attempt count are committed before the post starts, so a crash
    /// mid-post neither loses the event nor lets two workers post it at once.
    package func claimNextDueEvent(leaseSeconds: Int64, excluding: Set<Int64> = []) async throws -> OutboxClaim? {
        let now = clock.unixSeconds()
        let token = UUID().uuidString
        return try await write { db -> OutboxClaim? in
            typealias C = OutboxEvent.Columns
            var due = OutboxEvent.withSource.filter(
                (C.status == OutboxStatus.pending.rawValue && C.nextAttemptAt <= now)
                    || (C.status == OutboxStatus.inFlight.rawValue && C.claimedUntil <= now))
            if !excluding.isEmpty { due = due.filter(!excluding.contains(C.id)) }
            guard var event = try due.order(C.nextAttemptAt, C.id).fetchOne(db) else { return nil }
            event.status = .inFlight
            event.claimToken = token
            event.claimedUntil = now + max(1, leaseSeconds)
            event.attempts += 1
            event.updatedAt = now
            try event.update(db)
            guard let session = try StoredSession.fetchOne(db, key: event.sessionID) else { return nil }
            return OutboxClaim(
                eventID: event.eventID, token: token, attempt: event.attempts,
                session: session, blocks: try StageBlock.blocks(db, sessionID: event.sessionID))
        }
    }

    /// Marks a claimed event delivered and stores the backend's session id on the session.
    /// Returns false when the claim was lost (lease expired and another worker took it).
    @discardableResult
    package func markDelivered(_ claim: OutboxClaim, backendSessionID: String?) async throws -> Bool {
        let now = clock.unixSeconds()
        return try await write { db in
            typealias C = OutboxEvent.Columns
            typealias S = StoredSession.Columns
            let changed = try Self.claimed(claim).updateAll(db, [
                C.status.set(to: OutboxStatus.delivered.rawValue), C.lastError.set(to: nil), C.claimToken.set(to: nil),
                C.claimedUntil.set(to: nil), C.updatedAt.set(to: now),
            ])
            guard changed == 1 else { return false }
            var assignments = [S.syncStatus.set(to: SyncStatus.synced.rawValue), S.syncError.set(to: nil)]
            if let backendSessionID { assignments.append(S.backendSessionID.set(to: backendSessionID)) }
            try StoredSession.filter(key: claim.session.id).updateAll(db, assignments)
            return true
        }
    }

    /// Marks a claimed event failed for good, keeping the reason on the event and the session.
    @discardableResult
    package func markFailed(_ claim: OutboxClaim, reason: String) async throws -> Bool {
        let now = clock.unixSeconds()
        return try await write { db in
            typealias C = OutboxEvent.Columns
            typealias S = StoredSession.Columns
            let changed = try Self.claimed(claim).updateAll(db, [
                C.status.set(to: OutboxStatus.failed.rawValue), C.lastError.set(to: reason), C.claimToken.set(to: nil),
                C.claimedUntil.set(to: nil), C.updatedAt.set(to: now),
            ])
            guard changed == 1 else { return false }
            try StoredSession.filter(key: claim.session.id).updateAll(db, [
                S.syncStatus.set(to: SyncStatus.failed.rawValue), S.syncError.set(to: reason),
            ])
            return true
        }
    }

    /// Returns a claimed event to pending, due at `nextAttemptAt`, keeping the last error.
    /// `spent: false` gives the attempt back (no answer from the backend at all: an outage
    /// is not the session's, and must not use up its attempts).
    @discardableResult
    package func scheduleRetry(_ claim: OutboxClaim, reason: String, nextAttemptAt: Int64, spent: Bool = true) async throws -> Bool {
        let now = clock.unixSeconds()
        return try await write { db in
            typealias C = OutboxEvent.Columns
            var changes = [
                C.status.set(to: OutboxStatus.pending.rawValue), C.lastError.set(to: reason),
                C.nextAttemptAt.set(to: nextAttemptAt), C.claimToken.set(to: nil), C.claimedUntil.set(to: nil),
                C.updatedAt.set(to: now),
            ]
            if !spent { changes.append(C.attempts.set(to: SQL("max(0, \(C.attempts) - 1)"))) }
            return try Self.claimed(claim).updateAll(db, changes) == 1
        }
    }

    /// Gives a claim back unattempted (the worker is shutting down before posting it).
    @discardableResult
    package func releaseClaim(_ claim: OutboxClaim) async throws -> Bool {
        let now = clock.unixSeconds()
        return try await write { db in
            typealias C = OutboxEvent.Columns
            return try Self.claimed(claim).updateAll(db, [
                C.status.set(to: OutboxStatus.pending.rawValue), C.attempts.set(to: SQL("max(0, \(C.attempts) - 1)")),
                C.claimToken.set(to: nil), C.claimedUntil.set(to: nil), C.updatedAt.set(to: now),
            ]) == 1
        }
    }

    /// Puts every failed event back in the queue (after the cause was fixed, e.g. a token).
    @discardableResult
    package func requeueFailedEvents() async throws -> Int {
        let now = clock.unixSeconds()
        return try await write { db in
            typealias C = OutboxEvent.Columns
            typealias S = StoredSession.Columns
            let count = try OutboxEvent.filter(C.status == OutboxStatus.failed.rawValue).updateAll(db, [
                C.status.set(to: OutboxStatus.pending.rawValue), C.attempts.set(to: 0), C.nextAttemptAt.set(to: now),
                C.updatedAt.set(to: now),
            ])
            let queued = OutboxEvent.filter(C.status == OutboxStatus.pending.rawValue).select(C.sessionID)
            try StoredSession.filter(S.syncStatus == SyncStatus.failed.rawValue && queued.contains(S.id))
                .updateAll(db, [S.syncStatus.set(to: SyncStatus.pending.rawValue)])
            return count
        }
    }

    package func outboxSummary() async throws -> OutboxSummary {
        let now = clock.unixSeconds()
        return try await read { db in
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
    package func outboxEvents() async throws -> [OutboxEvent] {
        try await read { db in
            try OutboxEvent.withSource.order(OutboxEvent.Columns.id).fetchAll(db)
        }
    }
}
