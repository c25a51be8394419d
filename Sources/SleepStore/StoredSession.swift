import SleepDomain

/// Upload state of a session as the store records it.
package enum SyncStatus: String, Sendable, Codable {
    /// Preliminary: kept locally, never uploaded.
    case local
    /// Final and waiting in the outbox.
    case pending
    /// The backend has it (201, or 409 "already there").
    case synced
    /// The backend refused it (4xx) or the worker gave up; `syncError` says why.
    case failed
}

/// A session as read back from the store.
package struct StoredSession: Sendable, Hashable {
    /// Local row id (stable across re-analysis of the same source id).
    package var id: Int64
    package var sourceID: String
    package var podSerial: String
    package var side: BedSide
    package var start: Int64
    package var end: Int64
    /// Local date the session ends on, in the zone configured when it was stored.
    package var wakeDate: CalendarDay
    /// Identifier of that zone (e.g. `Europe/Berlin`).
    package var timeZoneID: String
    package var isFinal: Bool
    package var metrics: NightMetrics
    package var analyzedAt: Int64
    package var syncStatus: SyncStatus
    package var backendSessionID: String?
    package var syncError: String?
}

/// What `NightStore.save` did.
package struct SaveResult: Sendable, Hashable {
    package var sessionID: Int64
    package var sourceID: String
    package var wakeDate: CalendarDay
    /// True when a session with the same source id existed and was replaced in place.
    package var replacedExisting: Bool
    /// Other sessions of the same pod and side overlapping this one, removed because a
    /// re-analysis moved the session start (their source ids differ).
    package var supersededSessions: Int
    /// True when the session (final) now waits in the outbox for upload.
    package var queuedForUpload: Bool
}

/// One wake date's totals: all sessions ending that day summed (main sleep plus naps).
package struct DayTotal: Sendable, Hashable {
    package var date: CalendarDay
    package var sessions: Int
    package var timeInBedMinutes: Double
    package var totalSleepMinutes: Double
    package var awakeMinutes: Double
    package var coreMinutes: Double
    package var deepMinutes: Double
    package var remMinutes: Double
}

/// A pod the hub has seen.
package struct PodRecord: Sendable, Hashable {
    package var serial: String
    package var firmware: String?
    package var firstSeen: Int64
    package var lastSeen: Int64
}
