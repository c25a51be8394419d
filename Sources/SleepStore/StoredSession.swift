import SleepDomain

/// Upload state of a session as the store records it.
public enum SyncStatus: String, Sendable, Codable {
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
public struct StoredSession: Sendable, Hashable {
    /// Local row id (stable across re-analysis of the same source id).
    public var id: Int64
    public var sourceID: String
    public var podSerial: String
    public var side: BedSide
    public var start: Int64
    public var end: Int64
    /// Local date the session ends on, in the zone configured when it was stored.
    public var wakeDate: CalendarDay
    /// Identifier of that zone (e.g. `Europe/Berlin`).
    public var timeZoneID: String
    public var isFinal: Bool
    public var metrics: NightMetrics
    public var analyzedAt: Int64
    public var syncStatus: SyncStatus
    public var backendSessionID: String?
    public var syncError: String?
}

/// What `SleepStore.save` did.
public struct SaveResult: Sendable, Hashable {
    public var sessionID: Int64
    public var sourceID: String
    public var wakeDate: CalendarDay
    /// True when a session with the same source id existed and was replaced in place.
    public var replacedExisting: Bool
    /// Other sessions of the same pod and side overlapping this one, removed because a
    /// re-analysis moved the session start (their source ids differ).
    public var supersededSessions: Int
    /// True when the session (final) now waits in the outbox for upload.
    public var queuedForUpload: Bool
}

/// One wake date's totals: all sessions ending that day summed (main sleep plus naps).
public struct DayTotal: Sendable, Hashable {
    public var date: CalendarDay
    public var sessions: Int
    public var timeInBedMinutes: Double
    public var totalSleepMinutes: Double
    public var awakeMinutes: Double
    public var coreMinutes: Double
    public var deepMinutes: Double
    public var remMinutes: Double
}

/// A pod the hub has seen.
public struct PodRecord: Sendable, Hashable {
    public var serial: String
    public var firmware: String?
    public var firstSeen: Int64
    public var lastSeen: Int64
}
