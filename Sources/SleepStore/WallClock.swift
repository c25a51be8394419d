import Foundation

/// The wall clock the store and the upload worker read, injectable so tests control time
/// (outbox due times, backoff, leases, retention cut-offs) without sleeping.
public protocol WallClock: Sendable {
    /// Current time in Unix seconds (UTC).
    func now() -> Int64
}

/// The system's real-time clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Int64 { Int64(Date().timeIntervalSince1970.rounded(.down)) }
}
